"""A Debian 12 system image to boot a kernel package as a user would.

mmdebstrap writes bookworm (systemd, udev, kexec-tools,
initramfs-tools) into a directory, from the mirror of this machine's
own apt sources; the kernel is installed in it by dpkg (our package
from results/deb/) or by apt (Debian's own, by package name), so
initramfs-tools makes its initrd as on a user's machine. The lab then
adds the cpu-hotplug selftests of the series' tree, guest/debian-check
and the unit that runs it, and `mkfs.ext4 -d` turns the directory into
a disk image: no loop mount. The image's own /boot/vmlinuz-* and
initrd.img-* are copied beside the disk for QEMU's -kernel and -initrd.
"""
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

from bringuplab import progress
from bringuplab.host import apt_sources, packages
from bringuplab.report import record
from bringuplab.errors import InfraError, UsageError
from bringuplab.paths import BUILD, GUEST, LOGS

IMAGES = BUILD / "image"
SUITE = "bookworm"
# What the image holds besides the kernel: systemd as init, udev,
# kexec-tools for the round trip, initramfs-tools for the initrd,
# procps and util-linux for the checks (dmesg, the RTC alarm).
INCLUDE = ("systemd", "systemd-sysv", "udev", "kexec-tools",
           "initramfs-tools", "kmod", "procps", "util-linux", "bash",
           "e2fsprogs", "gawk")
# Where guest/debian-check finds the selftests in the image
SELFTESTS = Path("usr/lib/bringup-selftests")
CHECK = Path("usr/local/sbin/bringup-check")
UNIT = "bringup-check.service"
UNIT_TEXT = f"""[Unit]
Description=Parallel CPU bringup lab checks (guest/debian-check)
After=multi-user.target

[Service]
# exec, not oneshot: the boot finishes while the check waits for it
# (systemd-analyze has no times before)
Type=exec
# The script writes to /dev/ttyS0 itself, which no getty holds
ExecStart=/{CHECK}

[Install]
WantedBy=multi-user.target
"""
# The serial console is the lab's: a login prompt there would take the
# tty with vhangup(), and the check's lines after it would be lost
# (seen: "LAB: begin" and nothing more once "bringup login:" appeared).
MASKED = ("serial-getty@ttyS0.service",)
FSTAB = "/dev/vda / ext4 rw,errors=remount-ro 0 1\n"
# kexec-tools must not take over the reboot that ends the run
KEXEC_DEFAULTS = "LOAD_KEXEC=false\n"
DISK_MARGIN = 1.5           # the disk's size over what the files take
DISK_MIN_MB = 1024


@dataclass(frozen=True)
class Image:
    """A built image: its disk, and the kernel and initrd of its /boot."""
    name: str
    release: str
    disk: Path
    vmlinuz: Path
    initrd: Path


@dataclass(frozen=True)
class Kernel:
    """The kernel to put in an image: a .deb file (installed by dpkg) or
    the name of a package of the Debian archive (installed by apt)."""
    deb: Optional[Path] = None
    package: str = ""

    def __post_init__(self) -> None:
        if (self.deb is None) == (not self.package):
            raise UsageError("an image kernel is a .deb or a package name")
        if self.deb is not None and not self.deb.is_file():
            raise UsageError(f"no kernel package {self.deb}: run "
                             "`bringup deb`")


# Bookworm as a user's machine has it: with its updates and security
# updates (the pinned base, linux-source-6.1, comes from the latter, and
# so does Debian's kernel of the same version)
SUITES = (SUITE, f"{SUITE}-updates", f"{SUITE}-security")


def mirrors(sources: Optional[List[apt_sources.Source]] = None
            ) -> List[str]:
    """mmdebstrap's "deb URI SUITE main" lines: each of SUITES from the
    mirror of this machine's apt sources that serves it; InfraError if
    none serves bookworm itself."""
    sources = apt_sources.read_all() if sources is None else sources
    lines: List[str] = []
    for suite in SUITES:
        src = next((s for s in sources if suite in s.suites), None)
        if src is not None:
            lines.append(f"deb {src.uri} {suite} main")
    if not lines or not lines[0].endswith(f" {SUITE} main"):
        raise InfraError("no apt source of this machine names a Debian "
                         f"{SUITE} mirror for mmdebstrap")
    return lines


def mmdebstrap_argv(root: Path, kern: Kernel, lines: List[str]
                    ) -> List[str]:
    """mmdebstrap writing bookworm with the kernel into `root`."""
    include = list(INCLUDE)
    hooks: List[str] = []
    if kern.package:
        include.append(kern.package)
    else:
        assert kern.deb is not None
        hooks = ["--customize-hook=copy-in " + str(kern.deb) + " /tmp",
                 "--customize-hook=chroot \"$1\" dpkg -i /tmp/"
                 + kern.deb.name,
                 "--customize-hook=rm \"$1\"/tmp/" + kern.deb.name]
    return ["mmdebstrap", "--mode=root", "--variant=apt",
            "--include=" + ",".join(include), *hooks, SUITE, str(root),
            *lines]


def selftests(tree: Path, root: Path) -> None:
    """Install the cpu-hotplug selftests of kernel tree `tree` (ours
    and the kernel's) into the image root."""
    src = tree / "tools/testing/selftests/cpu-hotplug"
    scripts = sorted(src.glob("*.sh"))
    if not scripts:
        raise InfraError(f"no cpu-hotplug selftests in {src}")
    dest = root / SELFTESTS / "cpu-hotplug"
    dest.mkdir(parents=True, exist_ok=True)
    for script in scripts + [p for p in (src / "settings",) if p.is_file()]:
        shutil.copy(script, dest / script.name)


def configure(root: Path) -> None:
    """The lab's part of the image: fstab, the check script and its
    unit (enabled), kexec-tools kept off the reboot, no login prompt on
    the serial console."""
    (root / "etc/fstab").write_text(FSTAB)
    (root / "etc/hostname").write_text("bringup\n")
    (root / "etc/default").mkdir(exist_ok=True)
    (root / "etc/default/kexec").write_text(KEXEC_DEFAULTS)
    check = root / CHECK
    check.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(GUEST / "debian-check", check)
    check.chmod(0o755)
    units = root / "etc/systemd/system"
    units.mkdir(parents=True, exist_ok=True)
    (units / UNIT).write_text(UNIT_TEXT)
    wants = units / "multi-user.target.wants"
    wants.mkdir(parents=True, exist_ok=True)
    link = wants / UNIT
    link.unlink(missing_ok=True)
    link.symlink_to(f"/etc/systemd/system/{UNIT}")
    for unit in MASKED:
        mask = units / unit
        mask.unlink(missing_ok=True)
        mask.symlink_to("/dev/null")


def boot_files(root: Path) -> List[Path]:
    """The one vmlinuz-RELEASE and initrd.img-RELEASE of /boot;
    InfraError unless there is exactly one kernel with its initrd."""
    kernels = sorted((root / "boot").glob("vmlinuz-*"))
    if len(kernels) != 1:
        raise InfraError(f"{root}/boot holds {len(kernels)} kernels, "
                         "not one")
    release = kernels[0].name.removeprefix("vmlinuz-")
    initrd = root / "boot" / f"initrd.img-{release}"
    if not initrd.is_file():
        raise InfraError(f"no {initrd.name} in {root}/boot: "
                         "initramfs-tools made no initrd")
    return [kernels[0], initrd]


def kernel_packages(status: str) -> Dict[str, str]:
    """linux-image-* package -> version, from the text of the image's
    /var/lib/dpkg/status (installed ones only)."""
    found: Dict[str, str] = {}
    for stanza in status.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines()
                      if ": " in line and not line.startswith(" "))
        if fields.get("Package", "").startswith("linux-image-") and \
                fields.get("Status", "").endswith(" installed"):
            found[fields["Package"]] = fields.get("Version", "")
    return found


def disk_mb(used_bytes: int) -> int:
    """The disk's size for files taking `used_bytes`."""
    return max(DISK_MIN_MB, int(used_bytes * DISK_MARGIN / 2**20) + 256)


def tree_bytes(root: Path) -> int:
    return sum(p.lstat().st_size for p in root.rglob("*"))


def run_logged(argv: List[str], log: Path, what: str) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as logf:
        proc = subprocess.run(argv, stdout=logf, stderr=subprocess.STDOUT,
                              check=False)
    if proc.returncode != 0:
        lines = log.read_text(errors="replace").strip().splitlines()
        last = lines[-1] if lines else f"exit {proc.returncode}"
        raise InfraError(f"{what} failed: {last} (log: {log})")


def build(name: str, kern: Kernel, tree: Path) -> Image:
    """Build image `name` under build/image/NAME/."""
    if os.geteuid() != 0:
        raise InfraError("bringup image needs root: mmdebstrap --mode=root "
                         "(a chroot, no loop mount) and dpkg in it")
    packages.ensure(["image"])
    where = IMAGES / name
    root = where / "rootfs"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    log = LOGS / f"image-{name}.log"
    progress.say(f"image {name}: mmdebstrap {SUITE} into {root} "
                 f"(log {log})")
    lines = mirrors()
    run_logged(mmdebstrap_argv(root, kern, lines), log, "mmdebstrap")
    selftests(tree, root)
    configure(root)
    vmlinuz, initrd = boot_files(root)
    release = vmlinuz.name.removeprefix("vmlinuz-")
    about = dict(name=name, release=release, sources=lines,
                 kernel_packages=kernel_packages(
                     (root / "var/lib/dpkg/status").read_text()),
                 deb=str(kern.deb or ""), built=record.now())
    (where / "image.json").write_text(json.dumps(about, indent=1) + "\n")
    shutil.copy(vmlinuz, where / "vmlinuz")
    shutil.copy(initrd, where / "initrd.img")
    disk = where / "disk.img"
    size = disk_mb(tree_bytes(root))
    progress.say(f"image {name}: mkfs.ext4 -d, {size} MB")
    run_logged(["mkfs.ext4", "-q", "-F", "-L", "root", "-d", str(root),
                str(disk), f"{size}M"], LOGS / f"mkfs-{name}.log",
               "mkfs.ext4")
    shutil.rmtree(root)
    return Image(name, release, disk, where / "vmlinuz",
                 where / "initrd.img")
