"""The guest's initramfs: busybox, bash, /init and the selftests.

Written as a newc cpio archive by this module (no cpio tool needed), so
the image is byte-for-byte reproducible for the same inputs.
"""
import gzip
import hashlib
import re
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from bringuplab.errors import InfraError
from bringuplab.paths import BUILD, GUEST, TREE

SELFTESTS = "tools/testing/selftests/cpu-hotplug"
DIRS = ["bin", "sbin", "usr", "usr/bin", "usr/sbin", "proc", "sys", "dev",
        "tmp", "lib", "lib64", "etc", "lab", "lab/selftests",
        "lab/selftests/cpu-hotplug"]
# Dynamically linked host programs the guest runs, copied with their libs.
HOST_PROGRAMS = ["/bin/bash", "/sbin/kexec"]


@dataclass(frozen=True)
class Entry:
    """One archive member: a directory, file, symlink or device node."""
    name: str
    mode: int
    data: bytes = b""
    rdev: tuple = (0, 0)


def _header(ino: int, entry: Entry) -> bytes:
    name = entry.name.encode() + b"\0"
    fields = [ino, entry.mode, 0, 0, 1, 0, len(entry.data), 0, 0,
              entry.rdev[0], entry.rdev[1], len(name), 0]
    head = b"070701" + b"".join(b"%08X" % f for f in fields)
    pad = (4 - (len(head) + len(name)) % 4) % 4
    return head + name + b"\0" * pad


def cpio(entries: Iterable[Entry]) -> bytes:
    """Serialize entries as a newc archive with trailer."""
    out = bytearray()
    for ino, entry in enumerate(list(entries) + [Entry("TRAILER!!!", 0)],
                                start=1):
        out += _header(ino, entry)
        out += entry.data + b"\0" * ((4 - len(entry.data) % 4) % 4)
    return bytes(out)


def shared_libs(program: str) -> List[str]:
    """Absolute paths of the libraries ldd reports for program."""
    proc = subprocess.run(["ldd", program], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise InfraError(f"cannot list libraries of {program}")
    return re.findall(r"(/\S+\.so[.\d]*)", proc.stdout)


def _file(name: str, path: Path, mode: int = 0o755) -> Entry:
    try:
        return Entry(name, stat.S_IFREG | mode, path.read_bytes())
    except OSError as err:
        raise InfraError(f"initramfs: cannot read {path}: {err.strerror}") \
            from None


def entries(tree: Path = TREE,
            kernel: Optional[Path] = None) -> List[Entry]:
    """Everything that goes into the image; `kernel` becomes
    /lab/bzImage, the kernel the guest's kexec step loads."""
    items: Dict[str, Entry] = {}
    for d in DIRS:
        items[d] = Entry(d, stat.S_IFDIR | 0o755)
    items["dev/console"] = Entry("dev/console", stat.S_IFCHR | 0o600,
                                 rdev=(5, 1))
    items["init"] = _file("init", GUEST / "init")
    items["bin/busybox"] = _file("bin/busybox", Path("/bin/busybox"))
    for prog in HOST_PROGRAMS:
        items[prog.lstrip("/")] = _file(prog.lstrip("/"), Path(prog))
        for lib in shared_libs(prog):
            real = Path(lib).resolve()
            items[lib.lstrip("/")] = _file(lib.lstrip("/"), real)
    if kernel:
        items["lab/bzImage"] = _file("lab/bzImage", kernel, 0o644)
    tests = sorted((tree / SELFTESTS).glob("*.sh"))
    if not tests:
        raise InfraError(f"no selftests in {tree / SELFTESTS}")
    for test in tests:
        name = f"lab/selftests/cpu-hotplug/{test.name}"
        items[name] = _file(name, test)
    # Parents of library paths (lib/x86_64-linux-gnu) must exist too.
    for name in list(items):
        parent = str(Path(name).parent)
        while parent not in (".", "") and parent not in items:
            items[parent] = Entry(parent, stat.S_IFDIR | 0o755)
            parent = str(Path(parent).parent)
    return sorted(items.values(), key=lambda e: (e.name.count("/"), e.name))


def build(tree: Path = TREE, dest_dir: Path = BUILD,
          kernel: Optional[Path] = None) -> Path:
    """Write the gzipped image, named by content hash; return its path."""
    data = cpio(entries(tree, kernel))
    digest = hashlib.sha256(data).hexdigest()[:12]
    dest = dest_dir / f"initramfs-{digest}.cpio.gz"
    if not dest.exists():
        dest_dir.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(".tmp")
        tmp.write_bytes(gzip.compress(data, compresslevel=6, mtime=0))
        tmp.rename(dest)
    return dest
