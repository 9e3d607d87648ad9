"""Where the lab keeps things, relative to the repository root."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASE_FILE = ROOT / "BASE"
UPSTREAM_FILE = ROOT / "UPSTREAM"
PATCHES = ROOT / "patches"
# Lab-only patches applied on top of the series for some flavours
OVERLAY = ROOT / "lab" / "patches"
KCONFIG = ROOT / "kconfig"
GUEST = ROOT / "guest"
BUILD = ROOT / "build"
TREE = BUILD / "linux"
LOGS = BUILD / "logs"
# Debian's own kernel configs (package linux-config-6.1)
DEBIAN_CONFIGS = Path("/usr/src/linux-config-6.1")


def out_dir(config: str) -> Path:
    """Out-of-tree object directory for one config flavour."""
    return BUILD / f"out-{config}"
