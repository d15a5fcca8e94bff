"""The harness's own HTTP requests (readiness probes, response checks, the app's counters),
made with requests; a transport adapter carries them over a Unix domain socket, where the
nginx-uds mode's app listens.

Each request opens a new connection and closes it, as a load tool's first request would.
An https:// URL (a TLS mode's) is asked without verifying its certificate: a launch's own
throwaway, self-signed (certificate.py), as the load tools ask it.
"""

import socket
import warnings
from dataclasses import dataclass
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection
from urllib3.connectionpool import HTTPConnectionPool
from urllib3.exceptions import InsecureRequestWarning, NewConnectionError
from urllib3.util import SKIP_HEADER

# Besides Host, only an uncompressed body is asked for (what the load tools get), no
# User-Agent, Accept or Connection: the app compiles its handling of each header the first
# time it sees one, and the warm-up counts what the JIT compiles from the first load on.
HEADERS = {"Accept-Encoding": "identity", "User-Agent": SKIP_HEADER}


@dataclass(frozen=True)
class Response:
    """An answer as the checks read it, from requests here or from a host's helper
    (topology ssh: remote.Connection.request)."""

    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class _UnixConnection(HTTPConnection):
    def __init__(self, *args, socket_path: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.socket_path = socket_path

    def _new_conn(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)  # the request's timeout, set by the pool before this
        try:
            sock.connect(self.socket_path)
        except OSError as e:
            sock.close()
            raise NewConnectionError(self, f"cannot connect to {self.socket_path}: {e}") from e
        return sock


class _UnixPool(HTTPConnectionPool):
    ConnectionCls = _UnixConnection


class UnixSocketAdapter(HTTPAdapter):
    """Sends a session's http:// requests to one Unix domain socket: the URL's path and
    query say what is asked, its host goes only into the Host header."""

    def __init__(self, socket_path: str):
        super().__init__()
        self.socket_path = socket_path
        self._pools: dict[tuple[str, int | None], _UnixPool] = {}

    def get_connection_with_tls_context(self, request, verify, proxies=None, cert=None):
        parts = urlsplit(request.url)
        key = (parts.hostname or "localhost", parts.port)
        if key not in self._pools:
            self._pools[key] = _UnixPool(*key, socket_path=self.socket_path)
        return self._pools[key]

    def close(self):
        super().close()
        for pool in self._pools.values():
            pool.close()


def request(
    method: str,
    url: str,
    *,
    unix_socket: str | None = None,
    timeout: float = 5.0,
    headers: dict[str, str] | None = None,
) -> Response:
    """One request on a new connection; raises OSError (requests' errors are OSErrors) when
    nothing answers."""
    with requests.Session() as session:
        session.trust_env = False  # loopback probes never go through a proxy from the environment
        session.headers.clear()  # requests' defaults: HEADERS says what is sent
        if unix_socket:
            session.mount("http://", UnixSocketAdapter(unix_socket))
        session.verify = False  # https: the launch's self-signed certificate (see above)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InsecureRequestWarning)
            r = session.request(
                method, url, headers={**HEADERS, **(headers or {})}, timeout=timeout,
                allow_redirects=False,
            )  # fmt: skip
        return Response(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.content)


def get(url: str, **kwargs) -> Response:
    return request("GET", url, **kwargs)


def answers_ok(url: str, **kwargs) -> bool:
    """True when `url` answers 200; False when it refuses, times out or errs."""
    try:
        return get(url, timeout=kwargs.pop("timeout", 1.0), **kwargs).status == 200
    except OSError:
        return False


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
