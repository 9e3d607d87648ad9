"""bench and compare fail (infrastructure) instead of dropping the
host-clock rows of boots the probe did not time; progress on stderr."""
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from bringuplab import cli
from bringuplab.build import kernel, tree, variants
from bringuplab.guest import boot, initramfs
from bringuplab.host import hostcpu
from bringuplab.report import record
from bringuplab.runs import bench, compare
from bringuplab.errors import InfraError
from bringuplab.guest.machinespec import MachineSpec

BZ = kernel.of_image(Path("bz"))


def result(wall, verdict="pass"):
    return SimpleNamespace(verdict=verdict, bringup_ms=100.0,
                           mode="parallel", log="build/logs/b.log",
                           phases_us={}, host_wall_ms=wall,
                           host_vcpu_ms=wall, kick_total_us=None,
                           post_bringup_ms=None, host_milestone_ms=None,
                           reasons=[])


@pytest.fixture
def lab(monkeypatch, tmp_path):
    """Boots answered by `answers` in turn; nothing built."""
    answers = []
    monkeypatch.setattr(record, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(tree, "create", lambda: "tree up to date")
    monkeypatch.setattr(bench, "_build",
                        lambda which, config: kernel.of_image(Path(which)))
    monkeypatch.setattr(bench, "plot", lambda samples, cells, png: None)
    monkeypatch.setattr(initramfs, "build", lambda: Path("initrd"))
    monkeypatch.setattr(compare, "arms", lambda appends, without, configs:
                        [compare.Arm("default", "", BZ),
                         compare.Arm("w1", "x=1", BZ)])

    def fake_boot(spec, quiet=False):
        assert spec.host_cpu and quiet
        return answers.pop(0)
    monkeypatch.setattr(boot, "run", fake_boot)
    return answers


def test_require_is_quiet_for_timed_or_failed_boots():
    hostcpu.require("pass", 12.0, "x.log")
    hostcpu.require("fail", None, "x.log")
    hostcpu.require("hang", None, "x.log")
    with pytest.raises(InfraError, match="probe measured nothing"):
        hostcpu.require("pass", None, "x.log")


def test_bench_stops_at_a_passing_boot_the_host_did_not_time(lab):
    picked = variants.pick_variants("ours-parallel,ours-serial")
    lab += [result(80.0), result(None)]
    with pytest.raises(InfraError, match="b.log"):
        bench.run_suite("rr64", 1, picked)


def test_a_failed_boot_is_a_test_failure_not_infrastructure(lab, capsys):
    picked = variants.pick_variants("ours-parallel,ours-serial")
    lab += [result(80.0), result(None, "hang")] * 2
    rec = bench.run("rr64", 2, picked)
    assert not rec.ok
    assert len(rec.results["samples"]) == 4
    out = capsys.readouterr()
    # progress on stderr, [k/N] and an ETA; nothing on stdout
    assert out.out == ""
    steps = re.findall(r"^\[(\d)/4\] bench: .*?(ETA|done in)", out.err,
                       re.M)
    assert steps == [("1", "ETA"), ("2", "ETA"), ("3", "ETA"),
                     ("4", "done in")]
    assert "lab: bench: record " in out.err


def test_compare_stops_at_a_passing_boot_the_host_did_not_time(lab):
    lab += [result(80.0), result(None)]
    with pytest.raises(InfraError):
        compare.run(MachineSpec(4, "1x2x2"), [], [], 1)


def test_the_cli_exits_3_for_it(lab, monkeypatch, capsys):
    monkeypatch.setattr(cli.packages, "ensure", lambda stages: None)
    lab += [result(None)]
    assert cli.main(["bench", "--suite", "rr64", "--reps", "1",
                     "--variants", "ours-parallel"]) == 3
    assert "probe measured nothing" in capsys.readouterr().err


def test_compare_record_and_json(lab, monkeypatch, capsys):
    import json
    monkeypatch.setattr(cli.packages, "ensure", lambda stages: None)
    lab += [result(80.0), result(60.0)]
    assert cli.main(["compare", "--cpus", "4", "--topology", "1x2x2",
                     "--numa", "1", "--reps", "1", "--json"]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert data["kind"] == "compare" and data["results"]["arms"] == [
        "default", "w1"]
    assert "[2/2] compare: w1" in out.err
