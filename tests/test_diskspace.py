"""make check asks for its disk space before it writes, and a full disk
found later counts as the machine's, not as a broken series."""
from pathlib import Path

import pytest

from bringuplab.build import tree, worktree
from bringuplab.errors import InfraError, SeriesDoesNotApply
from bringuplab.host import diskspace
from bringuplab.report import record
from bringuplab.runs import check

GIB = diskspace.GIB
# What git printed in a CI run whose disk filled up at the first
# worktree of the check (a FAIL of "git am on a clean base" then).
FULL = ("'git -C /check/work/main/build/linux...' failed: fatal: cannot "
        "create directory at 'drivers/net/ethernet/freescale/dpaa2': No "
        "space left on device")


def test_only_the_parts_not_on_disk_are_needed(tmp_path):
    there, missing = tmp_path / "linux", tmp_path / "check" / "linux"
    there.mkdir()
    parts = [diskspace.Part(there, 2 * GIB), diskspace.Part(missing, GIB)]
    sp = diskspace.space(tmp_path, parts, margin=GIB // 2, free=2 * GIB)
    assert sp.need == GIB + GIB // 2
    assert sp.enough
    assert sp.line() == "2.0 GiB free, 1.5 GiB needed"


def test_too_little_space_says_what_to_do(tmp_path):
    part = diskspace.Part(tmp_path / "linux", 3 * GIB)
    sp = diskspace.space(tmp_path, [part], margin=0, free=GIB)
    assert not sp.enough
    assert sp.line() == ("1.0 GiB free, 3.0 GiB needed: free some, or run "
                         "on a larger disk")


def test_free_space_is_read_where_build_will_be(tmp_path):
    """build/ of a fresh clone does not exist: its parent's file system."""
    assert diskspace.existing(tmp_path / "build" / "check") == tmp_path
    assert diskspace.free_bytes(tmp_path / "build") > 0


def test_a_full_disk_found_by_any_step_is_infrastructure(capsys):
    tally = check.Tally()

    def fill() -> str:
        raise InfraError(FULL)
    tally.guard("git am on a clean base", fill)
    assert (tally.failed, tally.infra) == (0, 1)
    assert "check: INFRA git am on a clean base" in capsys.readouterr().out


def test_a_git_am_that_found_the_disk_full_is_infrastructure(tmp_path):
    """git am's own failure, when what failed was a write."""
    import subprocess
    from types import SimpleNamespace
    from bringuplab.build import tree as treemod
    said = ("Applying: x86/smpboot: one\nerror: unable to write file "
            "arch/x86/kernel/smpboot.c: No space left on device\n"
            "Patch failed at 0001 x86/smpboot: one\n")

    def fake_run(argv, **kwargs):
        return SimpleNamespace(returncode=1 if "am" in argv else 0,
                               stdout=said if "am" in argv else "",
                               stderr="")
    tally = check.Tally()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(subprocess, "run", fake_run)
        mp.setattr(treemod, "git", lambda args, where: "")
        tally.guard("git am on a clean base", lambda: treemod.apply_series(
            [tmp_path / "0001.patch"], tmp_path) or "")
    assert (tally.failed, tally.infra) == (0, 1)
    assert "No space left on device" in tally.steps[0]["detail"]


def test_other_errors_of_a_step_still_fail_it():
    tally = check.Tally()

    def broken() -> str:
        raise SeriesDoesNotApply("series does not apply: Patch failed at "
                                 "0003")
    tally.guard("git am on a clean base", broken)
    assert (tally.failed, tally.infra) == (1, 0)


def stub_run(monkeypatch, tmp_path, free):
    """check.run with nothing but its disk-space item real, `free`
    bytes free and none of its parts on disk."""
    monkeypatch.setattr(record, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(check.packages, "ensure", lambda stages: None)
    for step in ("unit_tests", "shellcheck", "quoted_figures"):
        monkeypatch.setattr(check, step, lambda tally: None)
    made = []
    monkeypatch.setattr(tree, "is_tree", lambda: False)
    monkeypatch.setattr(tree, "create",
                        lambda reset: made.append("tree") or "made")
    monkeypatch.setattr(check, "patches", lambda tally: False)
    for parts in ("CHECK_PARTS", "QUICK_PARTS"):
        monkeypatch.setattr(check, parts, tuple(
            diskspace.Part(tmp_path / p.path.name, p.size)
            for p in getattr(check, parts)))
    monkeypatch.setattr(diskspace, "free_bytes", lambda path: free)
    return made


def test_a_check_without_the_space_stops_before_it_writes(monkeypatch,
                                                           tmp_path,
                                                           capsys):
    made = stub_run(monkeypatch, tmp_path, free=GIB)
    rec = check.run()
    assert not rec.ok and made == []
    assert rec.results["infra"] == 1 and rec.results["failed"] == 0
    out = capsys.readouterr().out
    assert "check: INFRA disk space for build/: 1.0 GiB free" in out


@pytest.mark.parametrize("quick", [False, True])
def test_a_check_with_the_space_goes_on(monkeypatch, tmp_path, quick):
    made = stub_run(monkeypatch, tmp_path, free=100 * GIB)
    check.run(quick=quick)
    assert made == ["tree"]


def test_the_split_out_series_share_the_check_tree(monkeypatch, tmp_path):
    """One checkout on disk for every git am, and the series itself is
    the last thing applied there, for the builds."""
    trees, applied = [], []
    monkeypatch.setattr(check.checkpatch, "check_all", lambda: [])
    monkeypatch.setattr(tree, "series_files", lambda: [Path("ours")])
    monkeypatch.setattr(tree, "extra_names", lambda: ["scaling"])
    monkeypatch.setattr(tree, "combination", lambda which: [Path(which)])
    monkeypatch.setattr(worktree, "fresh",
                        lambda path: trees.append(path) or path)
    monkeypatch.setattr(worktree, "remove", lambda path: False)
    monkeypatch.setattr(tree, "apply_series",
                        lambda files, where: applied.append(files[0].name))
    assert check.patches(check.Tally())
    assert set(trees) == {check.CHECK_TREE}
    assert applied == ["ours", "base+scaling", "ours+scaling", "ours"]
