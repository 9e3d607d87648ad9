"""`bringup render FILE`: every kind of record as markdown, the files
committed in bench/ included."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bringuplab.report import record, render
import closedpipe
from bringuplab.report.record import Host, Provenance, Record

ROOT = Path(__file__).resolve().parents[1]
BRINGUP = ROOT / "tools" / "bringup"
COMMITTED = sorted(p.name for p in (ROOT / "bench").glob("*.json"))


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BRINGUP), *args],
                          capture_output=True, text=True, check=False)


def table_rows(text: str) -> int:
    """Lines of fenced tables below their dashes."""
    rows, inside, body = 0, False, False
    for line in text.splitlines():
        if line.startswith("```"):
            inside, body = not inside, False
        elif inside and set(line) <= {"-", " "} and line:
            body = True
        elif inside and body and line.strip():
            rows += 1
    return rows


@pytest.mark.parametrize("name", COMMITTED)
def test_every_committed_result_renders_with_rows(name):
    text = render.render_file(ROOT / "bench" / name)
    assert text.startswith("# ")
    assert table_rows(text) > 0, text
    assert "not recorded" in text


@pytest.mark.parametrize("name", [n for n in COMMITTED
                                  if n.startswith("compare-")])
def test_compare_results_render_their_arms(name):
    """`bench --render` printed empty tables for these."""
    data = json.loads((ROOT / "bench" / name).read_text())
    for how in (["render"], ["bench", "--render"]):
        proc = run(*how, str(ROOT / "bench" / name))
        assert proc.returncode == 0, proc.stderr
        for arm in data["arms"]:
            assert f"\n{arm}  " in proc.stdout, (arm, proc.stdout)
        assert "## The floor" in proc.stdout


def provenance() -> Provenance:
    return Provenance(["tools/bringup", "check"], "a" * 40, False, "b" * 40,
                      True, "QEMU emulator version 8.2.2", "gcc 12.2.0",
                      Host("AMD EPYC 7B13", 16, "Debian GNU/Linux 12"),
                      {"guest-check": "c" * 64}, "2026-12-03T10:00:00Z",
                      "2026-12-03T10:17:00Z")


def test_the_host_comes_from_the_record():
    rec = Record("check", True, {"passed": 2, "failed": 0, "steps": [
        {"name": "unit tests", "ok": True, "detail": ""},
        {"name": "boot intel-1", "ok": True, "detail": "x"}]},
        provenance())
    text = render.markdown(rec)
    assert "16 x AMD EPYC 7B13, Debian GNU/Linux 12" in text
    assert "2-core" not in text
    assert "QEMU emulator version 8.2.2" in text and "gcc 12.2.0" in text
    assert "lab aaaaaaaaaaaa, patches/ of bbbbbbbbbbbb with uncommitted" \
        in text
    assert "guest-check cccccccccccccccc" in text and "(17 min)" in text
    assert "2 passed, 0 failed" in text and table_rows(text) == 2


def test_a_soak_record_renders_its_summary_and_every_boot():
    boots = [{"scenario": "matrix", "name": f"m{i:03d}", "tcg": "single",
              "apic": "xapic", "verdict": verdict, "mode": "parallel",
              "cpus": "8/8", "bringup_ms": 12.5, "why": why, "log": "x"}
             for i, (verdict, why) in enumerate(
                 [("pass", ""), ("hang", "silent for 300 s"),
                  ("fail", "2 CPUs offline")])]
    rec = Record("soak", False, {
        "command": "make soak", "jobs": 2, "minutes": 61.0, "series": 39,
        "scenarios": [{"scenario": "matrix", "tried": 3, "passed": 1,
                       "failed": 1, "hung": 1}],
        "passed": 1, "failed": 2, "boots": boots}, provenance())
    text = render.markdown(rec)
    assert text.startswith("# soak: FAIL")
    assert "`make soak`" in text and "1 passed, 2 failed" in text
    assert "m001" in text and "silent for 300 s" in text
    # the summary row and its total line, then the three boots
    assert table_rows(text) == 2 + 3


def test_a_states_record_renders_the_split():
    boots = json.loads((ROOT / "bench" / "states.json").read_text())
    rec = Record("states", True, {"machine": "64 vCPUs 2x16x2",
                                  "command": "tools/bringup states",
                                  "reps": 1, "boots": boots}, provenance())
    text = render.markdown(rec)
    assert "64 vCPUs 2x16x2" in text and "bringup_cpu" in text


def test_render_json_and_a_record_that_failed(tmp_path):
    rec = Record("check", False, {"passed": 0, "failed": 1, "steps": [
        {"name": "unit tests", "ok": False, "detail": "1 failed"}],
        "failures": ["unit tests"]}, provenance())
    path = record.save(rec, tmp_path)
    proc = run("render", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "check"
    proc = run("render", str(path))
    assert proc.stdout.startswith("# make check: FAIL")
    assert "failed: unit tests" in proc.stdout


def test_render_of_what_is_not_a_record_is_a_usage_error(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"samples": [{"nonsense": 1}]}')
    proc = run("render", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_render_into_a_closed_pipe_ends_quietly():
    """`bringup bench --render X | head`"""
    closedpipe.ends_quietly(["bench", "--render",
                             str(ROOT / "bench" / "quick.json")])


def test_render_json_adds_the_derived_figures():
    """The rr64 floor of the README, by a command: `bringup render
    bench/rr64+...json --json`."""
    proc = run("render", str(ROOT / "bench" / (
        "rr64+ours-parallel+ours-serial+upstream-parallel.json")), "--json")
    assert proc.returncode == 0, proc.stderr
    derived = json.loads(proc.stdout)["derived"]
    [floor] = derived["floors"]
    assert (floor["variant"], round(floor["total_ms"]),
            round(floor["of_ours_serial"], 2),
            round(floor["of_upstream_parallel"], 2),
            round(floor["bringup_over_floor"], 2)) == (
        "ours-parallel", 291, 0.36, 0.52, 1.37)
    ratios = {r["ratio"]: r["per_rep"] for r in derived["rep_ratios"]}
    assert len(ratios["ours par / ours serial"]) == 5
    rec = record.Record("check", True, {})
    assert render.derived(rec) == {}


def test_a_soak_summary_shows_infra_boots_when_counted():
    rec = Record("soak", False, {"scenarios": [
        {"scenario": "matrix", "tried": 3, "passed": 1, "failed": 0,
         "hung": 1, "infra": 1}], "passed": 1, "failed": 2, "boots": []})
    text = render.markdown(rec)
    head = next(line for line in text.splitlines()
                if line.startswith("scenario"))
    assert head.split() == ["scenario", "boots", "passed", "failed",
                            "hung", "infra"]
    assert "matrix    3      1       0       1     1" in text
