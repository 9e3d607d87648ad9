"""`bringup deb`: what the package is called, where it is taken from,
its checksum, the ETA of its build and its record."""
import hashlib
import json

import pytest

from bringuplab.build import deb, kernel
from bringuplab.report import record, render
from bringuplab.errors import InfraError, UsageError

REV = "d9f653a0b1c2d3e4f5061728394a5b6c7d8e9f00"


def test_release_says_base_series_and_config():
    name = deb.naming("6.1.192", REV, "cloud")
    assert name.release == "6.1.192-bringup-d9f653a-cloud-amd64"
    assert name.localversion == "-bringup-d9f653a-cloud-amd64"
    assert name.package("image") == (
        "linux-image-6.1.192-bringup-d9f653a-cloud-amd64_6.1.192-1_"
        "amd64.deb")
    assert deb.naming("6.1.192", REV, "amd64").release.endswith(
        "-bringup-d9f653a-amd64")


def test_unknown_config_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown --config 'rt'"):
        deb.naming("6.1.192", REV, "rt")


@pytest.mark.parametrize("rev", ["unknown", "", "xyz1234"])
def test_a_revision_kbuild_cannot_name_is_refused(rev):
    with pytest.raises(InfraError, match="cannot name the package"):
        deb.naming("6.1.192", rev, "cloud")


def test_expected_objects_counts_the_last_build(tmp_path):
    log = tmp_path / "deb-cloud.log"
    log.write_text("  CC      kernel/cpu.o\n" * 1200
                   + "  CC [M]  fs/xfs/xfs_buf.o\n" * 300
                   + "  LD      vmlinux\n")
    assert deb.expected_objects("cloud", log) == 1500


def test_expected_objects_without_a_log_is_the_measured_guess(tmp_path):
    assert deb.expected_objects("cloud", tmp_path / "none.log") == \
        deb.OBJECTS["cloud"]
    # A build that stopped early does not set the estimate
    short = tmp_path / "short.log"
    short.write_text("  CC      kernel/cpu.o\n" * 10)
    assert deb.expected_objects("amd64", short) == deb.OBJECTS["amd64"]


def test_progress_line_has_an_eta_once_the_total_is_known():
    assert kernel.progress_line(250, 0, 40.2) == "250 objects, 40 s"
    assert kernel.progress_line(250, 1000, 60) == \
        "250/1000 objects (25%), 60 s, ETA 3 min"
    assert kernel.progress_line(1100, 1000, 600).endswith("ETA soon")


def test_collect_copies_both_packages_with_their_sha256(tmp_path):
    name = deb.naming("6.1.192", REV, "cloud")
    where, dest = tmp_path / "deb", tmp_path / "results"
    where.mkdir()
    for kind in ("image", "headers"):
        (where / name.package(kind)).write_bytes(kind.encode() * 100)
    built = deb.collect(name, where, dest)
    assert [b.name for b in built] == [
        f"linux-image-{name.release}", f"linux-headers-{name.release}"]
    image = dest / name.package("image")
    digest = hashlib.sha256(b"image" * 100).hexdigest()
    assert built[0].sha256 == digest and built[0].bytes == 500
    assert (dest / (image.name + ".sha256")).read_text() == \
        f"{digest}  {image.name}\n"


def test_collect_without_the_image_package_fails_in_one_line(tmp_path):
    name = deb.naming("6.1.192", REV, "cloud")
    with pytest.raises(InfraError, match="left no linux-image-6.1.192-"):
        deb.collect(name, tmp_path, tmp_path / "results")


def test_a_deb_record_renders_its_packages(tmp_path):
    results = dict(
        release="6.1.192-bringup-d9f653a-cloud-amd64", pkgversion="6.1.192-1",
        config="cloud", debian_config="cloud-amd64",
        base=dict(package="linux-source-6.1", version="6.1.192-3",
                  sha256="cacdc383"),
        series=dict(patches=14, head="56d280823abc"),
        packages=[dict(name="linux-image-x", path="/r/linux-image-x.deb",
                       sha256="ab" * 32, bytes=1234)],
        build_s=3000, jobs=2, log="build/logs/deb-cloud.log")
    path = tmp_path / "deb.json"
    path.write_text(json.dumps(dict(kind="deb", ok=True, results=results)))
    text = render.markdown(record.load(path))
    assert text.startswith("# Debian kernel package: pass")
    assert "Debian config cloud-amd64" in text
    assert "+ 14 patches" in text and "built in 50 min with -j2" in text
    assert f"| `linux-image-x.deb` | 1234 | `{'ab' * 32}` |" in text
