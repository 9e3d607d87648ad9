"""The Debian 12 image: what mmdebstrap is asked for, what the lab adds
to the root before mkfs.ext4 -d, and which kernel QEMU boots."""
import shutil
import subprocess
from pathlib import Path

import pytest

from bringuplab.guest import image
from bringuplab.host import apt_sources
from bringuplab.errors import InfraError, UsageError

ROOT = Path(__file__).resolve().parents[1]
URI = "http://deb.debian.org/debian"
LINES = [f"deb {URI} bookworm main"]


def test_an_archive_kernel_is_installed_by_apt(tmp_path):
    argv = image.mmdebstrap_argv(tmp_path / "root", image.Kernel(
        package="linux-image-cloud-amd64"), LINES)
    include = next(a for a in argv if a.startswith("--include="))
    assert "linux-image-cloud-amd64" in include.split("=")[1].split(",")
    assert "kexec-tools" in include and "systemd-sysv" in include
    assert not any(a.startswith("--customize-hook") for a in argv)
    assert argv[-3:] == ["bookworm", str(tmp_path / "root"),
                         f"deb {URI} bookworm main"]


def test_our_package_is_installed_by_dpkg_inside(tmp_path):
    pkg = tmp_path / "linux-image-6.1.192-bringup-x_6.1.192-1_amd64.deb"
    pkg.write_bytes(b"!<arch>\n")
    argv = image.mmdebstrap_argv(tmp_path / "root", image.Kernel(deb=pkg),
                                 LINES)
    hooks = [a.split("=", 1)[1] for a in argv
             if a.startswith("--customize-hook=")]
    assert hooks[0] == f"copy-in {pkg} /tmp"
    assert hooks[1] == f'chroot "$1" dpkg -i /tmp/{pkg.name}'
    assert "initramfs-tools" in next(a for a in argv
                                     if a.startswith("--include="))


def test_a_kernel_is_a_deb_or_a_package_name(tmp_path):
    with pytest.raises(UsageError, match="a .deb or a package name"):
        image.Kernel()
    with pytest.raises(UsageError, match="run `bringup deb`"):
        image.Kernel(deb=tmp_path / "none.deb")


def test_configure_enables_the_check_after_multi_user(tmp_path):
    (tmp_path / "etc").mkdir()
    image.configure(tmp_path)
    unit = tmp_path / "etc/systemd/system" / image.UNIT
    assert "After=multi-user.target" in unit.read_text()
    assert "WantedBy=multi-user.target" in unit.read_text()
    link = tmp_path / "etc/systemd/system/multi-user.target.wants" / \
        image.UNIT
    assert str(link.readlink()) == f"/etc/systemd/system/{image.UNIT}"
    check = tmp_path / image.CHECK
    assert check.read_text() == (ROOT / "guest/debian-check").read_text()
    assert check.stat().st_mode & 0o111
    assert (tmp_path / "etc/fstab").read_text().startswith("/dev/vda / ")
    assert "LOAD_KEXEC=false" in (tmp_path / "etc/default/kexec").read_text()
    # no login on the serial console, which the check writes to
    getty = tmp_path / "etc/systemd/system/serial-getty@ttyS0.service"
    assert str(getty.readlink()) == "/dev/null"
    # Again on the same root: the same, no error
    image.configure(tmp_path)


def test_selftests_come_from_the_tree(tmp_path):
    src = tmp_path / "linux/tools/testing/selftests/cpu-hotplug"
    src.mkdir(parents=True)
    (src / "cpu-on-off-test.sh").write_text("#!/bin/bash\n")
    (src / "Makefile").write_text("all:\n")
    image.selftests(tmp_path / "linux", tmp_path / "root")
    dest = tmp_path / "root" / image.SELFTESTS / "cpu-hotplug"
    assert sorted(p.name for p in dest.iterdir()) == ["cpu-on-off-test.sh"]


def test_no_selftests_is_an_error(tmp_path):
    with pytest.raises(InfraError, match="no cpu-hotplug selftests"):
        image.selftests(tmp_path, tmp_path / "root")


def test_boot_files_want_one_kernel_with_its_initrd(tmp_path):
    boot = tmp_path / "boot"
    boot.mkdir()
    with pytest.raises(InfraError, match="holds 0 kernels"):
        image.boot_files(tmp_path)
    (boot / "vmlinuz-6.1.0-41-cloud-amd64").write_text("k")
    with pytest.raises(InfraError, match="initramfs-tools made no initrd"):
        image.boot_files(tmp_path)
    (boot / "initrd.img-6.1.0-41-cloud-amd64").write_text("i")
    assert [p.name for p in image.boot_files(tmp_path)] == [
        "vmlinuz-6.1.0-41-cloud-amd64", "initrd.img-6.1.0-41-cloud-amd64"]
    (boot / "vmlinuz-6.1.192-bringup-x").write_text("k")
    with pytest.raises(InfraError, match="holds 2 kernels"):
        image.boot_files(tmp_path)


def test_disk_size_leaves_room():
    assert image.disk_mb(0) == image.DISK_MIN_MB
    assert image.disk_mb(2 * 2**30) == 3072 + 256


def test_the_check_script_is_shellcheck_clean():
    assert shutil.which("shellcheck"), "shellcheck (stage check) missing"
    proc = subprocess.run(["shellcheck", str(ROOT / "guest/debian-check")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout


STATUS = """Package: linux-image-6.1.0-50-cloud-amd64
Status: install ok installed
Version: 6.1.164-1
Description: Linux 6.1 for x86-64 cloud
 a continuation line: Version: 0

Package: linux-image-cloud-amd64
Status: install ok installed
Version: 6.1.164-1

Package: linux-image-6.1.0-9-amd64
Status: deinstall ok config-files
Version: 6.1.27-1

Package: kmod
Status: install ok installed
Version: 30+20221128-1
"""


def test_kernel_packages_of_the_image_are_the_installed_ones():
    assert image.kernel_packages(STATUS) == {
        "linux-image-6.1.0-50-cloud-amd64": "6.1.164-1",
        "linux-image-cloud-amd64": "6.1.164-1"}


def source(uri, *suites):
    return apt_sources.Source(uri, suites, ("main",), None, "test")


def test_the_image_has_bookworm_with_its_updates_and_security():
    sources = [source("http://b.example/debian", "bookworm-backports"),
               source("http://m.example/debian", "bookworm",
                      "bookworm-updates"),
               source("http://s.example/debian-security",
                      "bookworm-security")]
    assert image.mirrors(sources) == [
        "deb http://m.example/debian bookworm main",
        "deb http://m.example/debian bookworm-updates main",
        "deb http://s.example/debian-security bookworm-security main"]


def test_no_bookworm_mirror_is_an_error():
    with pytest.raises(InfraError, match="no apt source"):
        image.mirrors([source("http://s.example/debian-security",
                              "bookworm-security")])


def test_a_failed_step_names_its_last_line_and_log(tmp_path):
    log = tmp_path / "mmdebstrap.log"
    with pytest.raises(InfraError) as err:
        image.run_logged(["sh", "-c", "echo I: starting; echo 'E: apt-get "
                          "download failed'; exit 1"], log, "mmdebstrap")
    assert str(err.value) == ("mmdebstrap failed: E: apt-get download "
                              f"failed (log: {log})")
