"""BASE pin parsing and tarball verification."""
import hashlib

import pytest

from bringuplab.build import base
from bringuplab.errors import LabError

TEXT = """# pin
package = linux-source-6.1
version = 6.1.192-3
tarball = {tar}
sha256 = {sha}
kernelversion = 6.1.192
"""


def test_parse_and_verify(tmp_path):
    tar = tmp_path / "t.tar.xz"
    tar.write_bytes(b"kernel")
    pin = base.parse_base(TEXT.format(
        tar=tar, sha=hashlib.sha256(b"kernel").hexdigest()))
    assert pin.version == "6.1.192-3"
    base.verify(pin)


def test_corrupt_tarball_is_one_clear_error(tmp_path):
    tar = tmp_path / "t.tar.xz"
    tar.write_bytes(b"truncated")
    pin = base.parse_base(TEXT.format(tar=tar, sha="0" * 64))
    with pytest.raises(LabError, match="corrupt"):
        base.verify(pin)


def test_missing_tarball(tmp_path):
    pin = base.parse_base(TEXT.format(tar=tmp_path / "no", sha="0" * 64))
    with pytest.raises(LabError, match="missing"):
        base.verify(pin)


def test_missing_field():
    with pytest.raises(LabError, match="missing field sha256"):
        base.parse_base("package = a\nversion = b\ntarball = c\n"
                        "kernelversion = d\n")


def test_repo_pin_is_well_formed():
    pin = base.load()
    assert pin.package == "linux-source-6.1" and len(pin.sha256) == 64
