"""`bringup status` and `make status`: the README's Status section
written from records, never typed."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bringuplab.report import status
from bringuplab.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
BRINGUP = ROOT / "tools" / "bringup"
KEPT = ROOT / "records" / "check-20261203T094500Z.json"


def check_record(tmp_path: Path, name: str, failed: int) -> Path:
    """The kept check record, with `failed` of its steps failed."""
    data = json.loads(KEPT.read_text())
    steps = data["results"]["steps"]
    for step in steps[:failed]:
        step["ok"] = False
    data["ok"] = not failed
    data["results"].update(passed=len(steps) - failed, failed=failed,
                           failures=[s["name"] for s in steps[:failed]])
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def table_rows(text: str) -> list:
    return [[c.strip() for c in line.strip("|").split("|")]
            for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| run ")]


def test_the_kept_check_record_renders_as_pass():
    text = status.markdown([KEPT])
    assert "`make status`" in text
    assert table_rows(text) == [[
        "`tools/bringup check`", "pass", "56", "0", "35 min", "c035428",
        "`records/check-20261203T094500Z.json`"]]
    assert "No record yet: `make bench`, `make soak`, `make buildtest`." \
        in " ".join(text.split())


def test_a_record_with_failures_renders_as_fail(tmp_path):
    path = check_record(tmp_path, "check-20261204T000000Z.json", 2)
    [row] = table_rows(status.markdown([path]))
    assert row[1:4] == ["fail", "54", "2"]


def test_the_newest_record_of_each_kind_is_shown(tmp_path):
    check_record(tmp_path, "check-20261201T000000Z.json", 0)
    check_record(tmp_path, "check-20261205T000000Z.json", 3)
    (tmp_path / "buildtest-20261202-101010.json").write_text(json.dumps({
        "argv": ["tools/bringup", "buildtest"], "seconds": 5400,
        "repo": {"head": "abcdef0123", "dirty": False}, "targets": [],
        "passed": 30, "failed": 0}))
    (tmp_path / "each-patch-boot-20261203.txt").write_text("not a record")
    paths = status.newest(tmp_path)
    assert [p.name for p in paths] == ["check-20261205T000000Z.json",
                                       "buildtest-20261202-101010.json"]
    rows = table_rows(status.markdown(paths, tmp_path))
    assert rows[0][1:4] == ["fail", "53", "3"]
    assert rows[1][:6] == ["`tools/bringup buildtest`", "pass", "30", "0",
                           "90 min", "abcdef0"]



def test_a_buildtest_cut_off_says_how_much_it_did_not_build(tmp_path):
    (tmp_path / "buildtest-20261203-101010.json").write_text(json.dumps({
        "argv": ["tools/bringup", "buildtest"], "seconds": 600,
        "targets": [], "passed": 5, "failed": 0, "complete": False,
        "not_built": ["i386-smp", "debian-amd64"]}))
    rows = table_rows(status.markdown(status.newest(tmp_path), tmp_path))
    assert rows[0][1:4] == ["pass (cut off, 2 not run)", "5", "0"]


def test_a_buildtest_of_some_targets_does_not_stand_for_the_kind(tmp_path):
    data = json.loads(KEPT.read_text())

    def buildtest(name: str, *argv: str) -> None:
        args = ["tools/bringup", "buildtest", *argv]
        data["provenance"]["argv"] = args
        data.update(kind="buildtest", ok=True, results={
            "argv": args, "seconds": 600, "targets": [], "passed": 2,
            "failed": 0, "complete": True, "not_built": []})
        (tmp_path / name).write_text(json.dumps(data))
    buildtest("buildtest-20261201T000000Z.json", "--jobs", "2")
    buildtest("buildtest-20261202T000000Z.json", "--only", "x86_64-scale")
    assert [p.name for p in status.newest(tmp_path)] == [
        "buildtest-20261201T000000Z.json"]


def test_a_bench_record_counts_its_boots(tmp_path):
    data = json.loads(KEPT.read_text())
    data.update(kind="bench", ok=False, results={
        "command": "make bench", "samples": [
            {"verdict": "pass"}, {"verdict": "hang"}, {"verdict": "pass"}]})
    path = tmp_path / "bench-20261203T000000Z.json"
    path.write_text(json.dumps(data))
    [row] = table_rows(status.markdown([path]))
    assert row[:4] == ["`make bench`", "fail", "2", "1"]


def test_a_scale_or_cut_short_bench_does_not_stand_for_the_series(
        tmp_path):
    data = json.loads(KEPT.read_text())

    def bench(name: str, **results) -> None:
        data.update(kind="bench", ok=True, results=dict(
            {"command": "make bench", "samples": []}, **results))
        (tmp_path / name).write_text(json.dumps(data))
    bench("bench-20261201T000000Z.json", suite="targets")
    bench("bench-20261202T000000Z.json", suite="scale")
    bench("bench-20261203T000000Z.json", suite="targets", complete=False)
    assert [p.name for p in status.newest(tmp_path)] == [
        "bench-20261201T000000Z.json"]
    bench("bench-20261204T000000Z.json", suite="quick", complete=True)
    assert [p.name for p in status.newest(tmp_path)] == [
        "bench-20261204T000000Z.json"]
    # some of a suite's machines (bench --cpus) are not the suite
    bench("bench-20261205T000000Z.json", suite="quick", complete=True,
          sizes=[64])
    assert [p.name for p in status.newest(tmp_path)] == [
        "bench-20261204T000000Z.json"]


def test_the_section_between_the_markers_is_replaced():
    text = ("# T\n\n## Status\n\n" + status.STATUS_BEGIN + "\nold, typed\n"
            + status.STATUS_END + "\n\n## Next\n")
    new = status.replace_section(text, "generated")
    assert new == ("# T\n\n## Status\n\n" + status.STATUS_BEGIN
                   + "\ngenerated\n" + status.STATUS_END + "\n\n## Next\n")
    assert status.replace_section(new, "generated") == new
    with pytest.raises(UsageError, match="no <!-- status:begin -->"):
        status.replace_section("## Status\n\ntyped\n", "generated")


def test_the_readme_status_is_what_make_status_writes():
    """README.md's section is the generated one (run `make status`
    after keeping a new record), and the README stays under 10 KB."""
    readme = (ROOT / "README.md").read_text()
    body = status.markdown(status.newest())
    assert status.replace_section(readme, body) == readme
    assert len(readme.encode()) <= 10000


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BRINGUP), *args],
                          capture_output=True, text=True, check=False)


def test_the_command_prints_and_updates(tmp_path):
    proc = run("status", str(KEPT))
    assert proc.returncode == 0, proc.stderr
    assert "| `tools/bringup check` | pass | 56 | 0 |" in proc.stdout
    readme = tmp_path / "README.md"
    readme.write_text(f"## Status\n\n{status.STATUS_BEGIN}\nx\n"
                      f"{status.STATUS_END}\n")
    proc = run("status", str(KEPT), "--update", str(readme))
    assert proc.returncode == 0, proc.stderr
    assert "| `tools/bringup check` | pass |" in readme.read_text()
    assert "\nx\n" not in readme.read_text()


@pytest.mark.parametrize("args,message", [
    (["status", "/nonexistent.json"], "cannot read /nonexistent.json"),
    (["status", str(ROOT / "README.md")], "is not JSON"),
    (["status", "--update", str(ROOT / "Makefile")],
     "no <!-- status:begin -->"),
])
def test_bad_input_is_one_line(args, message):
    proc = run(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr


BENCH = status.RECORDS / "bench-20261206T084023Z.json"


def test_the_kept_bench_record_meets_one_target_and_misses_one():
    lines = status.target_lines(BENCH)
    assert "v3 par / upstream par 0.78" in lines[2] and "**met**" in lines[2]
    assert "v3 par / upstream par 1.04" in lines[3]
    assert "**missed**" in lines[3]


def test_a_faster_parallel_boot_meets_the_target(tmp_path):
    data = json.loads(BENCH.read_text())
    for smp in data["results"]["samples"]:
        if (smp["tcg"] == "multi" and smp["variant"]
                == "ours+calibration+workqueue-parallel"):
            smp["host_wall_ms"] /= 4
    path = tmp_path / BENCH.name
    path.write_text(json.dumps(data))
    lines = status.target_lines(path)
    assert "0.26" in lines[3] and "**met**" in lines[3]


def test_a_soak_cut_off_shows_what_it_did_not_run(tmp_path):
    data = json.loads(KEPT.read_text())
    data["kind"] = "soak"
    data["results"] = {"command": "make soak", "passed": 120, "failed": 0,
                       "not_run": 235, "complete": False, "boots": []}
    path = tmp_path / "soak-20261204T000000Z.json"
    path.write_text(json.dumps(data))
    [row] = table_rows(status.markdown([path]))
    assert row[:4] == ["`make soak`", "pass (cut off, 235 not run)", "120",
                       "0"]
