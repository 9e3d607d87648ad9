"""`make check`: one boot reads the host's clock and fails when the probe
returns nothing; the run leaves its record, path printed last."""
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from bringuplab.build import kernel, tree
from bringuplab.guest import boot
from bringuplab.host import packages
from bringuplab.report import record
from bringuplab.runs import check


def result(wall, vcpu, verdict="pass"):
    return SimpleNamespace(verdict=verdict, reasons=[], host_wall_ms=wall,
                           host_vcpu_ms=vcpu, log="build/logs/x.log")


@pytest.fixture
def plan(monkeypatch, tmp_path):
    """check.run with every step but the host-clock boot stubbed: the
    boots asked for are in `asked`."""
    asked = []
    monkeypatch.setattr(record, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(packages, "ensure", lambda stages: None)
    monkeypatch.setattr(check, "unit_tests",
                        lambda tally: tally.add("unit tests", True))
    monkeypatch.setattr(check, "shellcheck", lambda tally: None)
    monkeypatch.setattr(check, "quoted_figures", lambda tally: None)
    monkeypatch.setattr(check, "disk_space", lambda tally, quick: True)
    monkeypatch.setattr(tree, "is_tree", lambda: True)
    monkeypatch.setattr(check, "patches", lambda tally: True)
    monkeypatch.setattr(check, "build_and_boot",
                        lambda tally, config, name: (
                            kernel.built_in(Path(f"out-{config}"), config),
                            Path("initrd")))
    monkeypatch.setitem(check.AFTER_MATRIX, "debug",
                        lambda tally, image, initrd: None)

    def run(answer):
        def fake_boot(spec, quiet=False):
            asked.append(spec)
            return answer
        monkeypatch.setattr(boot, "run", fake_boot)
        return check.run()
    return run, asked


def test_the_host_clock_boot_passes_when_the_probe_measured(plan, capsys):
    run, asked = plan
    rec = run(result(120.5, 118.0))
    assert rec.ok
    [spec] = asked
    assert spec.host_cpu
    assert spec.kernel == Path("out-guest/arch/x86/boot/bzImage")
    assert spec.mach.cpus == check.HOST_CLOCK.cpus
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-3] == "3 passed, 0 failed"
    assert out[-2].startswith("check: JUnit XML ")
    assert out[-1].startswith("check: record ")
    path = Path(out[-1].split("check: record ", 1)[1])
    data = json.loads(path.read_text())
    assert data["kind"] == "check" and data["ok"] is True
    steps = [s["name"] for s in data["results"]["steps"]]
    assert steps[0] == "unit tests" and steps[1].startswith("tree ")
    assert steps[2:] == [
        f"host clock read by the probe ({check.HOST_CLOCK.cpus} vCPUs)"]
    assert data["provenance"]["host"]["cpus"] >= 1


@pytest.mark.parametrize("answer", [result(None, None),
                                    result(120.5, None),
                                    result(0.0, 0.0),
                                    result(120.5, 118.0, "hang")])
def test_the_host_clock_boot_fails_when_the_probe_found_nothing(plan,
                                                                answer):
    run, _ = plan
    rec = run(answer)
    assert not rec.ok
    assert rec.results["failures"] == [
        f"host clock read by the probe ({check.HOST_CLOCK.cpus} vCPUs)"]


def test_json_check_keeps_stdout_for_the_record(plan, capsys, monkeypatch):
    from bringuplab import cli
    run, _ = plan
    monkeypatch.setattr(boot, "run", lambda spec, quiet=False:
                        result(100.0, 90.0))
    assert cli.main(["check", "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["kind"] == "check"
    assert "check: PASS unit tests" in out.err
