"""`[k/N] ... ETA` progress, and --json on every command that reports."""
import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from bringuplab import cli, progress
from bringuplab.build import kernel
from bringuplab.host import packages
from bringuplab.report import record, render
from bringuplab.runs import matrix
from bringuplab.guest.machinespec import MachineSpec

# A bzImage path with no build beside it (NR_CPUS unknown: 512)
BZ = kernel.of_image(Path("bzImage"))


def test_progress_counts_and_estimates_what_is_left():
    now = [100.0]
    out = io.StringIO()
    steps = progress.Progress(4, "soak", out, clock=lambda: now[0])
    now[0] += 60
    steps.done("m000")
    now[0] += 120
    steps.done("m001")
    now[0] += 3600
    steps.done("m002")
    steps.done("m003")
    assert out.getvalue().splitlines() == [
        "[1/4] soak: m000, ETA 3 min",
        "[2/4] soak: m001, ETA 3 min",
        "[3/4] soak: m002, ETA 21 min",
        "[4/4] soak: m003, done in 1 h 03 min"]
    assert progress.duration(42) == "42 s"


REPORTING = ["boot", "matrix quick", "checkpatch", "demo", "bench",
             "compare", "states", "soak", "check", "render x.json"]


@pytest.mark.parametrize("command", REPORTING)
def test_every_reporting_command_takes_json(command):
    args = cli.build_parser().parse_args(command.split() + ["--json"])
    assert args.json is True


def boot_result(verdict: str = "pass") -> SimpleNamespace:
    """What a judged boot carries, as matrix and soak read it."""
    fields = dict(verdict=verdict, reasons=[] if verdict == "pass"
                  else ["silent for 300 s"], rules=[], apic="x2apic",
                  mode="parallel", cpus_online=1, cpus_expected=1,
                  bringup_ms=12.0, log="build/logs/x.log")
    return SimpleNamespace(**fields, to_dict=lambda: dict(fields))


def test_matrix_json_is_stdout_and_the_table_is_not(monkeypatch, capsys,
                                                   tmp_path):
    from bringuplab.build import tree
    from bringuplab.guest import initramfs
    rows = [matrix.Row(matrix.Entry("intel-1", MachineSpec(1)), boot_result())]
    monkeypatch.setattr(record, "RESULTS", tmp_path)
    monkeypatch.setattr(packages, "ensure", lambda stages: None)
    monkeypatch.setattr(initramfs, "build", lambda: Path("initrd"))
    monkeypatch.setattr(tree, "series_files", lambda: [])
    monkeypatch.setattr(matrix, "run", lambda *a, **k: rows)
    assert cli.main(["matrix", "quick", "--kernel", "bz", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data[0]["name"] == "intel-1" and data[0]["ok"] is True
    assert cli.main(["matrix", "quick", "--kernel", "bz"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 0 failed"
    # each run leaves a record of the lab's schema, which render prints
    saved = sorted(tmp_path.glob("matrix-*.json"))
    assert len(saved) == 2
    rec = record.load(saved[-1])
    assert rec.kind == "matrix" and rec.ok and rec.provenance
    assert rec.results["boots"][0]["name"] == "intel-1"
    assert "intel-1" in render.markdown(rec)


def test_run_entries_reports_each_boot_on_stderr(monkeypatch, capsys):
    from bringuplab.guest import boot
    monkeypatch.setattr(boot, "run", lambda spec, quiet=False:
                        boot_result())
    monkeypatch.setattr(boot, "kernel_nr_cpus", lambda kernel: 512)
    todo = [matrix.Entry(f"e{i}", MachineSpec(1)) for i in range(3)]
    rows = matrix.run_entries(todo, BZ, None, False,
                              done=progress.of_boots(3, "boots"))
    assert [row.entry.name for row in rows] == ["e0", "e1", "e2"]
    out = capsys.readouterr()
    assert out.out == ""
    assert "[3/3] boots: e2, done in" in out.err


def test_soak_leaves_a_record_with_every_boot(monkeypatch, tmp_path,
                                              capsys):
    """Hangs counted apart from failures; the scenario tables are
    progress (stderr), the record's markdown the result."""
    from bringuplab.build import kernel, tree
    from bringuplab.guest import initramfs
    from bringuplab.report import record
    monkeypatch.setattr(record, "RESULTS", tmp_path)
    monkeypatch.setattr(packages, "ensure", lambda stages: None)
    monkeypatch.setattr(tree, "create", lambda: "tree up to date")
    monkeypatch.setattr(tree, "series_files", lambda: [])
    monkeypatch.setattr(kernel, "build",
                        lambda name="guest": kernel.built_in(Path(name)))
    monkeypatch.setattr(initramfs, "build", lambda **k: Path("initrd"))

    def entries(todo, image, rd, modes, jobs, done):
        rows = [matrix.Row(e, boot_result("pass" if i else "hang"))
                for i, e in enumerate(todo)]
        for row in rows:
            done(row)
        return rows
    monkeypatch.setattr(matrix, "run_entries", entries)
    code = cli.main(["soak", "--only", "cmdline", "--jobs", "1"])
    out = capsys.readouterr()
    assert code == 1
    assert out.out.startswith("# soak: FAIL")
    assert "7 passed, 1 failed" in out.out
    assert "cmdline:" in out.err and "[8/8] soak:" in out.err
    [path] = tmp_path.glob("soak-*.json")
    data = json.loads(path.read_text())
    [scenario] = data["results"]["scenarios"]
    assert {k: scenario[k] for k in ("scenario", "tried", "passed",
                                     "failed", "hung")} == {
        "scenario": "cmdline", "tried": 8, "passed": 7, "failed": 0,
        "hung": 1}
    boots = data["results"]["boots"]
    assert [b["verdict"] for b in boots][:2] == ["hang", "pass"]
    assert boots[0]["why"] == "silent for 300 s"
    assert data["results"]["command"] == \
        "tools/bringup soak --boots 300 --seed 1 --only cmdline"


def test_demo_leaves_a_record_render_prints_as_its_table(monkeypatch,
                                                          capsys, tmp_path):
    from bringuplab.build import tree
    from bringuplab.guest import initramfs
    from bringuplab.runs import demo
    rows = [matrix.Row(entry, boot_result())
            for entry in matrix.MATRICES["demo"]]
    monkeypatch.setattr(record, "RESULTS", tmp_path)
    monkeypatch.setattr(packages, "ensure", lambda stages: None)
    monkeypatch.setattr(tree, "create", lambda: "tree up to date")
    monkeypatch.setattr(tree, "series_files", lambda: ["p"])
    monkeypatch.setattr(kernel, "build", lambda config: BZ)
    monkeypatch.setattr(initramfs, "build", lambda: Path("initrd"))
    monkeypatch.setattr(matrix, "run", lambda *a, **k: rows)
    assert demo.run() == 0
    table = capsys.readouterr().out.strip()
    [saved] = tmp_path.glob("demo-*.json")
    rec = record.load(saved)
    assert [b["cmdline"] for b in rec.results["boots"]] == [
        "default", "cpuhp.parallel=0"]
    assert table in render.markdown(rec)
