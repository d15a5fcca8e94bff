"""A TLS mode's certificate: a throwaway self-signed EC certificate made by openssl for each
launch, in a temporary folder of its own (never in the run folder, so never under data/ nor
committed), put where the launch's programs run (Place.secrets: on an ssh host, a copy that
is removed with it) and removed when the launch ends, on success, error or Ctrl-C alike.

The load tools do not verify it (each skips verification its own way: load.TOOLS), so its
names only have to be right for a client that checks them: 127.0.0.1, localhost and the
address the front listens on (a namespace's or an ssh host's)."""

import ipaddress
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...errors import HostbenchError
from ...programs import Certificate
from .processes import finished
from .tools import find_tool

CERT_FILE, KEY_FILE = "tls-cert.pem", "tls-key.pem"
CURVE = "prime256v1"  # P-256: what every load tool's TLS library accepts
LIFETIME_DAYS = 1  # a launch lasts minutes; a key that leaked would be worthless by tomorrow
FOLDER_PREFIX = "hostbench-tls-"


def subject_names(front_host: str) -> list[str]:
    """The certificate's subjectAltName entries: loopback, and the front's own address."""
    names = ["IP:127.0.0.1", "DNS:localhost"]
    try:
        ipaddress.ip_address(front_host)
        own = f"IP:{front_host}"
    except ValueError:
        own = f"DNS:{front_host}"
    return names if own in names else [*names, own]


def generate(folder: Path, front_host: str = "127.0.0.1") -> Certificate:
    """A self-signed certificate and its key (PEM, unencrypted, the key readable by the
    harness's user only) in `folder`; HostbenchError with openssl's last line when it fails."""
    folder = Path(folder)
    cert, key = folder / CERT_FILE, folder / KEY_FILE
    argv = [str(find_tool("openssl")), "req", "-x509", "-newkey", "ec", "-pkeyopt",
            f"ec_paramgen_curve:{CURVE}", "-nodes", "-keyout", str(key), "-out", str(cert),
            "-days", str(LIFETIME_DAYS), "-subj", "/CN=hostbench throwaway",
            "-addext", "subjectAltName=" + ",".join(subject_names(front_host))]  # fmt: skip
    done = finished(argv, timeout=60)
    if done.returncode != 0 or not cert.is_file() or not key.is_file():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise HostbenchError(f"openssl could not make the launch's certificate: {last}")
    os.chmod(key, 0o600)
    return Certificate(str(cert), str(key))


@contextmanager
def per_launch(place, front_host: str) -> Iterator[Certificate]:
    """A new certificate for one launch, as the programs on `place` read it; its files (and
    their copies on an ssh host) are gone once the block ends, however it ends."""
    with tempfile.TemporaryDirectory(prefix=FOLDER_PREFIX) as tmp:
        made = generate(Path(tmp), front_host)
        with place.secrets([Path(made.cert), Path(made.key)]) as there:
            yield Certificate(*there)
