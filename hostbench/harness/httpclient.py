"""A tiny HTTP/1.1 client for readiness probes and response checks.

http.client rather than requests because it also speaks over a Unix domain
socket (the nginx-uds mode's app listens on one).
"""

import http.client
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def request(
    method: str, url: str, *, unix_socket: str | None = None, timeout: float = 5.0
) -> Response:
    """One request; raises OSError (or http.client.HTTPException) when nothing answers."""
    parts = urlsplit(url)
    if unix_socket:
        conn = _UnixConnection(unix_socket, timeout)
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        conn.request(method, path, headers={"Host": parts.netloc or "localhost"})
        resp = conn.getresponse()
        body = resp.read()
        headers = {k.lower(): v for k, v in resp.getheaders()}
        return Response(resp.status, headers, body)
    finally:
        conn.close()


def get(url: str, **kwargs) -> Response:
    return request("GET", url, **kwargs)


def answers_ok(url: str, **kwargs) -> bool:
    """True when `url` answers 200; False when it refuses, times out or errs."""
    try:
        return get(url, timeout=kwargs.pop("timeout", 1.0), **kwargs).status == 200
    except (OSError, http.client.HTTPException):
        return False


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
