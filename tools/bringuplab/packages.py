"""Installing the Debian packages each stage needs, by package name."""
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Sequence

from .errors import LabError

# Stage -> Debian packages it needs.
NEEDS: Dict[str, List[str]] = {
    "tree": ["git", "xz-utils", "patch"],
    "kernel": ["build-essential", "flex", "bison", "bc", "libelf-dev",
               "libssl-dev", "ccache", "cpio", "kmod", "python3"],
    # kexec-tools: the guest's kexec; the host never loads a kernel with it.
    "initramfs": ["busybox-static", "kexec-tools"],
    "boot": ["qemu-system-x86"],
    "check": ["python3-pytest", "shellcheck", "perl"],
    "bench": ["gnuplot-nox"],
}

# Stages only `buildtest` needs (Debian's own kernel configs, sparse, the
# cross compilers of the generic-code builds). Kept out of NEEDS, which
# `make check` installs whole, so CI does not pull in cross compilers.
BUILDTEST_NEEDS: Dict[str, List[str]] = {
    "debian-configs": ["linux-config-6.1"],
    "sparse": ["sparse"],
    "cross-arm64": ["gcc-aarch64-linux-gnu"],
    "cross-riscv64": ["gcc-riscv64-linux-gnu"],
    "cross-ppc64le": ["gcc-powerpc64le-linux-gnu"],
}

# TCG in QEMU 7.2 (bookworm) has no x2APIC and stops at 255 vCPUs; the
# bookworm-backports QEMU has both, so the lab takes QEMU from there.
BACKPORTS = {"qemu-system-x86": "bookworm-backports"}
BACKPORTS_SOURCE = Path("/etc/apt/sources.list.d/bringup-lab-backports.sources")
BACKPORTS_TEXT = """Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""
# The backports QEMU is the one with TCG x2APIC support.
MIN_QEMU = (8, 1)


def installed(pkg: str) -> bool:
    """True if dpkg says pkg is installed."""
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg],
                          capture_output=True, text=True, check=False)
    return proc.returncode == 0 and "install ok installed" in proc.stdout


def qemu_version() -> tuple:
    """(major, minor) of qemu-system-x86_64, or (0, 0) if absent."""
    exe = shutil.which("qemu-system-x86_64")
    if not exe:
        return (0, 0)
    out = subprocess.run([exe, "--version"], capture_output=True, text=True,
                         check=False).stdout.split()
    try:
        ver = out[out.index("version") + 1]
        major, minor = ver.split(".")[:2]
        return (int(major), int(minor))
    except (ValueError, IndexError):
        return (0, 0)


def _apt(args: Sequence[str]) -> None:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    proc = subprocess.run(["apt-get", *args], env=env, text=True,
                          capture_output=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()
        raise LabError(f"apt-get {' '.join(args)} failed: "
                       f"{last[-1] if last else proc.returncode}")


def ensure(stages: Sequence[str]) -> None:
    """Install what the named stages need and is missing."""
    wanted = [p for s in stages for p in {**NEEDS, **BUILDTEST_NEEDS}[s]]
    # list(NEEDS) means every stage; dedupe keeps the order stable.
    stages = list(dict.fromkeys(stages))
    missing = sorted({p for p in wanted if not installed(p)})
    need_new_qemu = "boot" in stages and qemu_version() < MIN_QEMU
    if not missing and not need_new_qemu:
        return
    if not shutil.which("apt-get"):
        raise LabError(f"missing packages {' '.join(missing)} and no "
                       "apt-get to install them (Debian 12 expected)")
    if os.geteuid() != 0:
        raise LabError(f"missing packages {' '.join(missing)}: "
                       "run as root so the lab can apt-get install them")
    if need_new_qemu and not BACKPORTS_SOURCE.exists():
        BACKPORTS_SOURCE.write_text(BACKPORTS_TEXT)
    print(f"lab: installing {' '.join(missing) or 'qemu-system-x86'}",
          file=sys.stderr)
    _apt(["update", "-qq"])
    if "kexec-tools" in missing:
        # Keep the host's own reboots ordinary.
        subprocess.run(["debconf-set-selections"], text=True, check=False,
                       input="kexec-tools kexec-tools/load_kexec boolean "
                       "false\n", capture_output=True)
    plain = [p for p in missing if p not in BACKPORTS]
    if plain:
        _apt(["install", "-y", "-qq", *plain])
    for pkg, suite in BACKPORTS.items():
        if pkg in missing or (pkg == "qemu-system-x86" and need_new_qemu):
            _apt(["install", "-y", "-qq", "-t", suite, pkg])
    if "boot" in stages and qemu_version() < MIN_QEMU:
        raise LabError("qemu-system-x86_64 >= 8.1 is needed (TCG x2APIC); "
                       f"found {qemu_version()}")
