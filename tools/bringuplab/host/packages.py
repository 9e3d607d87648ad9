"""Installing the Debian packages each stage needs, by package name."""
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

from bringuplab.host import apt_sources
from bringuplab.errors import InfraError

# Stage -> Debian packages it needs.
NEEDS: Dict[str, List[str]] = {
    "tree": ["git", "xz-utils", "patch"],
    "kernel": ["build-essential", "flex", "bison", "bc", "libelf-dev",
               "libssl-dev", "ccache", "cpio", "kmod", "python3"],
    # kexec-tools: the guest's kexec; the host never loads a kernel with it.
    "initramfs": ["busybox-static", "kexec-tools"],
    "boot": ["qemu-system-x86"],
    # python3-junitparser: the unit test that reads make check's JUnit XML
    # as a CI system would
    "check": ["python3-pytest", "python3-junitparser", "shellcheck", "perl"],
    "bench": ["gnuplot-nox"],
    # serialwork's TCG plugin (tools/plugin/serialwork.c); QEMU's plugin
    # header comes from `apt-get source qemu` (serialwork.header())
    "plugin": ["gcc", "libglib2.0-dev", "pkg-config"],
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

# Stages of `bringup deb` and the Debian image (not in NEEDS either):
# make bindeb-pkg runs dpkg-buildpackage, which checks the build
# dependencies mkdebian writes (rsync among them) and uses fakeroot.
DEB_NEEDS: Dict[str, List[str]] = {
    # openssl: the module signing key the build makes (debian-cloud.config)
    "deb": ["dpkg-dev", "fakeroot", "rsync", "openssl", "linux-config-6.1"],
    "image": ["mmdebstrap", "e2fsprogs"],
}

# TCG in QEMU 7.2 (bookworm) has no x2APIC and stops at 255 vCPUs; the
# bookworm-backports QEMU has both, so the lab takes QEMU from there, from
# the mirror the machine's own apt sources name (apt_sources.py).
BACKPORTS = {"qemu-system-x86": "bookworm-backports"}
BACKPORTS_SOURCE = Path("/etc/apt/sources.list.d/bringup-lab-backports.sources")
# The backports QEMU is the one with TCG x2APIC support.
MIN_QEMU = (8, 1)


def installed(pkg: str) -> bool:
    """True if dpkg says pkg is installed."""
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg],
                          capture_output=True, text=True, check=False)
    return proc.returncode == 0 and "install ok installed" in proc.stdout


def qemu_version() -> Tuple[int, int]:
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
        raise InfraError(f"apt-get {' '.join(args)} failed: "
                         f"{last[-1] if last else proc.returncode}")


@dataclass
class Plan:
    """What ensure() is about to do to the machine."""
    missing: List[str]
    new_qemu: bool                 # QEMU present but older than MIN_QEMU
    qemu_found: Tuple[int, int]
    source_text: str = ""          # the backports source to add, if any
    mirror: str = ""

    def empty(self) -> bool:
        return not self.missing and not self.new_qemu

    def describe(self) -> str:
        """The announcement, printed before anything changes."""
        plain = [p for p in self.missing if p not in BACKPORTS]
        back = [p for p in BACKPORTS
                if p in self.missing or (self.new_qemu and
                                         p == "qemu-system-x86")]
        parts = []
        if plain:
            parts.append(" ".join(plain))
        for pkg in back:
            why = (f" (QEMU {self.qemu_found[0]}.{self.qemu_found[1]} found, "
                   f"{MIN_QEMU[0]}.{MIN_QEMU[1]} needed)"
                   if self.new_qemu and pkg == "qemu-system-x86"
                   and self.qemu_found != (0, 0) else "")
            parts.append(f"{pkg} from {BACKPORTS[pkg]}{why}")
        text = "lab: installing with apt-get: " + "; ".join(parts)
        if self.source_text:
            text += (f"; adding the apt source {BACKPORTS_SOURCE} "
                     f"({self.mirror}, the mirror of this machine's own "
                     "apt sources)")
        return text


def backports_source(etc: Path = apt_sources.ETC_APT) -> Tuple[str, str]:
    """The text of the backports source and its mirror, taken from the
    machine's own apt sources; InfraError if none serves bookworm."""
    suite = BACKPORTS["qemu-system-x86"]
    found = apt_sources.mirror_for(
        apt_sources.read_all(etc, skip=(BACKPORTS_SOURCE.name,)), suite)
    if found is None:
        raise InfraError(f"no apt source of this machine names a Debian "
                         f"{apt_sources.release_of(suite)} mirror to take "
                         f"{suite} from: add one, or install QEMU >= "
                         f"{MIN_QEMU[0]}.{MIN_QEMU[1]} yourself")
    return apt_sources.deb822(found, suite), found.uri


def plan(stages: Sequence[str]) -> Plan:
    """What the named stages need and is missing, and how to get it."""
    wanted = [p for s in stages for p in {**NEEDS, **BUILDTEST_NEEDS, **DEB_NEEDS}[s]]
    missing = sorted({p for p in wanted if not installed(p)})
    found = qemu_version()
    todo = Plan(missing, "boot" in stages and found < MIN_QEMU, found)
    needs_backports = todo.new_qemu or any(p in BACKPORTS for p in missing)
    if needs_backports and not BACKPORTS_SOURCE.exists():
        todo.source_text, todo.mirror = backports_source()
    return todo


def ensure(stages: Sequence[str]) -> None:
    """Install what the named stages need and is missing, saying what
    before anything is changed."""
    stages = list(dict.fromkeys(stages))
    todo = plan(stages)
    if todo.empty():
        return
    missing = todo.missing
    if not shutil.which("apt-get"):
        raise InfraError(f"missing packages {' '.join(missing)} and no "
                         "apt-get to install them (Debian 12 expected)")
    if os.geteuid() != 0:
        raise InfraError(f"missing packages {' '.join(missing)}: "
                         "run as root so the lab can apt-get install them")
    print(todo.describe(), file=sys.stderr, flush=True)
    if todo.source_text:
        BACKPORTS_SOURCE.write_text(todo.source_text)
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
        if pkg in missing or (pkg == "qemu-system-x86" and todo.new_qemu):
            _apt(["install", "-y", "-qq", "-t", suite, pkg])
    if "boot" in stages and qemu_version() < MIN_QEMU:
        raise InfraError("qemu-system-x86_64 >= 8.1 is needed (TCG x2APIC); "
                         f"found {qemu_version()}")
