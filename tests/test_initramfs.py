"""The newc writer produces archives the real cpio tool reads."""
import shutil
import stat
import subprocess

import pytest

from bringuplab.guest import initramfs


@pytest.mark.skipif(not shutil.which("cpio"), reason="needs cpio")
def test_cpio_lists_members(tmp_path):
    data = initramfs.cpio([
        initramfs.Entry("bin", stat.S_IFDIR | 0o755),
        initramfs.Entry("bin/x", stat.S_IFREG | 0o755, b"abc"),
        initramfs.Entry("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1)),
    ])
    proc = subprocess.run(["cpio", "-t", "--quiet"], input=data,
                          capture_output=True, check=True)
    assert proc.stdout.decode().split() == ["bin", "bin/x", "dev/console"]
    out = tmp_path / "x"
    out.mkdir()
    subprocess.run(["cpio", "-id", "--quiet", "bin/x"], input=data,
                   cwd=out, check=True)
    assert (out / "bin/x").read_bytes() == b"abc"


def test_header_is_aligned():
    data = initramfs.cpio([initramfs.Entry("abc", stat.S_IFREG, b"12345")])
    assert data.startswith(b"070701") and len(data) % 4 == 0
    assert data.rstrip(b"\0").endswith(b"TRAILER!!!")
