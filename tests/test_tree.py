"""The work tree: all-or-nothing git am, export round trip, .gitignore."""
import subprocess
from pathlib import Path

import pytest

from bringuplab.build import tree
from bringuplab.errors import InfraError, LabError


def git(path: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(path), *tree.IDENTITY, *args],
                          check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def repo(tmp_path):
    """A tiny 'kernel' repo tagged base, plus a two-patch series."""
    work = tmp_path / "linux"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "smpboot.c").write_text("one\ntwo\nthree\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "base")
    git(work, "tag", "base")
    for line, subject in (("four", "first"), ("five", "second")):
        with (work / "smpboot.c").open("a") as fobj:
            fobj.write(line + "\n")
        git(work, "commit", "-q", "-am", f"x86: {subject}")
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / tree.COVER).write_text("cover letter\n")
    git(work, "format-patch", "-q", "--zero-commit", "--no-signature",
        "-o", str(patches),
        "base..HEAD")
    git(work, "reset", "-q", "--hard", "base")
    return work, patches


def test_apply_then_idempotent(repo):
    work, patches = repo
    series = tree.series_files(patches)
    assert [p.name[:4] for p in series] == ["0001", "0002"]
    assert tree.create(tree=work, patches=series) == \
        "tree at base + 2 patches"
    assert tree.create(tree=work, patches=series) == \
        "tree up to date: base + 2 patches"
    assert (work / "smpboot.c").read_text().endswith("five\n")


def test_broken_patch_names_it_and_leaves_base(repo):
    work, patches = repo
    second = sorted(patches.glob("0002-*"))[0]
    second.write_text(second.read_text().replace("+five", "+FIVE")
                      .replace(" four", " FOUR"))
    with pytest.raises(LabError, match="Patch failed at 0002"):
        tree.create(tree=work, patches=tree.series_files(patches))
    assert git(work, "rev-parse", "HEAD") == git(work, "rev-parse", "base")
    assert not git(work, "status", "--porcelain")


def test_unexported_commits_are_not_thrown_away(repo):
    work, patches = repo
    tree.create(tree=work, patches=tree.series_files(patches))
    (work / "new.c").write_text("x\n")
    git(work, "add", "new.c")
    git(work, "commit", "-q", "-m", "x86: third")
    with pytest.raises(LabError, match="bringup export"):
        tree.create(tree=work, patches=tree.series_files(patches))


def test_export_round_trip(repo, monkeypatch):
    work, patches = repo
    tree.create(tree=work, patches=tree.series_files(patches))
    before = {p.name: p.read_text() for p in patches.iterdir()}
    monkeypatch.setattr(tree, "BUILD", work.parent)
    assert tree.export(work, patches) == 2
    after = {p.name: p.read_text() for p in patches.iterdir()}
    assert after == before
    assert "up to date" in tree.create(tree=work,
                                       patches=tree.series_files(patches))


def test_strip_debian_ignore(tmp_path):
    ignore = tmp_path / ".gitignore"
    ignore.write_text("*.o\n/vmlinux\n\n#\n# Debian packaging: ignore "
                      "everything\n#\n/*\n!/debian/\n")
    tree.strip_debian_ignore(ignore)
    assert ignore.read_text() == "*.o\n/vmlinux\n"


def test_checkpatch_exceptions_survive_renumbering(tmp_path):
    from bringuplab.build import checkpatch
    exc = tmp_path / "checkpatch-exceptions"
    exc.write_text("# comment\n"
                   "selftests-x.patch FILE_PATH_CHANGES covered\n"
                   "0003-docs-y.patch TYPO why\n")
    allowed = checkpatch.exceptions(exc)
    assert allowed[checkpatch.patch_key("0021-selftests-x.patch")] == \
        {"FILE_PATH_CHANGES"}
    assert allowed[checkpatch.patch_key("0007-docs-y.patch")] == {"TYPO"}


@pytest.fixture
def extras(tmp_path):
    """patches/ with a main series of one patch and two split-out ones."""
    patches = tmp_path / "patches"
    for sub, names in (("", ["0001-main.patch"]),
                       ("calibration", ["0001-a.patch", "0002-b.patch"]),
                       ("workqueue", ["0001-wq.patch"]),
                       ("empty", [])):
        (patches / sub).mkdir(parents=True, exist_ok=True)
        for name in names:
            (patches / sub / name).write_text(name)
    (patches / tree.COVER).write_text("cover")
    return patches


def test_split_out_series_are_the_directories_with_patches(extras):
    assert tree.extra_names(extras) == ["calibration", "workqueue"]
    assert [p.name for p in tree.series_files(extras)] == ["0001-main.patch"]


def test_a_combination_is_the_main_series_then_each_named_one(extras):
    names = [str(p.relative_to(extras))
             for p in tree.combination("ours+calibration+workqueue", extras)]
    assert names == ["0001-main.patch", "calibration/0001-a.patch",
                     "calibration/0002-b.patch", "workqueue/0001-wq.patch"]
    assert [p.name for p in tree.combination("base+workqueue", extras)] == [
        "0001-wq.patch"]


@pytest.mark.parametrize("which", ["ours+nosuch", "ours+empty", "v1+workqueue"])
def test_a_combination_names_only_known_series(extras, which):
    with pytest.raises(LabError, match="unknown series|starts with"):
        tree.combination(which, extras)


def test_a_split_out_series_applies_on_base_and_on_the_series(repo):
    """What `make check` tries for each patches/NAME/: a patch to another
    file applies both ways; one written against the series' own lines
    applies on top of it but not on the base alone."""
    work, patches = repo
    git(work, "checkout", "-q", "--detach", "base")
    (work / "workqueue.c").write_text("wq\n")
    git(work, "add", "workqueue.c")
    git(work, "commit", "-q", "-m", "workqueue: independent")
    (patches / "wq").mkdir()
    git(work, "format-patch", "-q", "--zero-commit", "--no-signature",
        "-o", str(patches / "wq"), "HEAD~1..HEAD")
    tree.apply_series(tree.series_files(patches), work)
    with (work / "smpboot.c").open("a") as fobj:
        fobj.write("six\n")
    git(work, "commit", "-q", "-am", "x86: needs the series")
    (patches / "dep").mkdir()
    git(work, "format-patch", "-q", "--zero-commit", "--no-signature",
        "-o", str(patches / "dep"), "HEAD~1..HEAD")
    for which in ("base+wq", "ours+wq", "ours+dep", "ours+wq+dep"):
        tree.apply_series(tree.combination(which, patches), work)
    with pytest.raises(LabError, match="series does not apply"):
        tree.apply_series(tree.combination("base+dep", patches), work)


def test_series_at_reads_the_main_or_a_split_out_series_of_a_revision(
        tmp_path, monkeypatch):
    from bringuplab.runs import bench
    monkeypatch.setattr(tree, "BUILD", tmp_path)
    main = tree.series_at(bench.V3_REV)
    calibration = tree.series_at(bench.V3_REV, extra="calibration")
    # v3 as first sent: 14 patches, and 2 in its calibration series
    assert len(main) == 14 and len(calibration) == 2
    assert all(p.parent == tmp_path / f"series-{bench.V3_REV}" for p in main)
    assert all(p.name.startswith(("0001-", "0002-")) and "tsc" in p.name
               for p in calibration)
    # reading the split-out series leaves the main series' files alone
    assert all(p.is_file() for p in main)
    with pytest.raises(InfraError, match="patches/nosuch"):
        tree.series_at(bench.V3_REV, extra="nosuch")
