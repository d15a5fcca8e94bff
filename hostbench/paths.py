"""Where things live in the checkout."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
BIN = BUILD / "bin"
TESTAPP = BUILD / "testapp" / "TestApp"
YARP_PROXY = BUILD / "yarp" / "YarpProxy"  # the `yarp` mode's proxy (testapp/yarp)
DATA = ROOT / "data"
RUNS = DATA / "runs"
STUDIES_DIR = ROOT / "studies"  # one folder per study (hostbench.studies)
NOTEBOOKS = ROOT / "notebooks"
