"""The soak counts the judge's statuses: hangs apart from failures."""
from bringuplab.runs import matrix, soak
from bringuplab.verdict import judge, parse, result
from bringuplab.errors import UsageError
from bringuplab.verdict.judge import Expect
from bringuplab.guest.machinespec import MachineSpec
from reallogs import load

TOPO = "series-intel-32-2x8x2-topology-hotplug.log"


def row(text: str, want: Expect) -> matrix.Row:
    return matrix.Row(matrix.Entry("e", MachineSpec(want.vcpus)),
                      result.of_log(text, want))


def test_a_scenario_counts_passes_failures_hangs_and_infra():
    topo = Expect(32, 32, 32, ("cpus", "hotplug"), "parallel",
                  topologies=((2, 16, 2),))
    livelock = load("soak-rr170-periodic-tick-livelock.log")
    rows = [
        row(load(TOPO), topo),
        row(load(TOPO), topo),
        row(livelock + parse.killed_line("silent for 300 s"),
            Expect(170, 170, 170)),
        # the same log, QEMU not killed: it ended, a fail
        row(livelock, Expect(170, 170, 170)),
        row(load("panic-no-init.log"), Expect(2, 2, 2)),
        row(load(TOPO).splitlines()[0] + "\nqemu-system-x86_64: nope\n",
            topo),
    ]
    assert [r.result.verdict for r in rows] == [
        judge.PASS, judge.PASS, judge.HANG, judge.FAIL, judge.FAIL,
        judge.INFRA]
    assert [r.ok for r in rows] == [True, True, False, False, False, False]
    got = soak.tally("matrix", [soak.boot_record("matrix", r)["verdict"]
                                for r in rows])
    assert got == soak.Summary("matrix", 6, 2, 2, 1, 1)
    assert got.bad == 4
    table = soak.render_summary([got]).splitlines()
    assert table[0].split() == ["scenario", "boots", "passed", "failed",
                                "hung", "infra"]
    assert table[2].split() == ["matrix", "6", "2", "2", "1", "1"]


def test_an_empty_scenario():
    assert soak.tally("kexec", []) == soak.Summary("kexec", 0, 0, 0, 0, 0)


class CutOff(Exception):
    """The soak stopped without warning (a session's end, a power cut)."""


def fake_lab(monkeypatch, tmp_path, allowed: list) -> list:
    """soak.run() without kernels or QEMU: every boot passes with a real
    32-vCPU log, and once `allowed[0]` boots are booted the run is cut
    off. Returns the names booted, in order."""
    from pathlib import Path
    from bringuplab.build import kernel, tree
    from bringuplab.guest import initramfs
    from bringuplab.host import packages
    from bringuplab.report import record

    topo = Expect(32, 32, 32, ("cpus", "hotplug"), "parallel",
                  topologies=((2, 16, 2),))
    booted: list = []

    def run_entries(todo, _kernel, _initrd, _modes, _jobs, done):
        rows = []
        for entry in todo:
            if len(booted) == allowed[0]:
                raise CutOff()
            booted.append(entry.name)
            rows.append(matrix.Row(entry, result.of_log(load(TOPO), topo)))
            done(rows[-1])
        return rows
    monkeypatch.setattr(record, "RESULTS", tmp_path)
    monkeypatch.setattr(packages, "ensure", lambda needs: None)
    monkeypatch.setattr(tree, "create", lambda: "tree as it is")
    monkeypatch.setattr(tree, "series_files", lambda: [Path("0001-x")])
    monkeypatch.setattr(kernel, "build",
                        lambda flavour: kernel.Kernel(tmp_path, tmp_path))
    monkeypatch.setattr(initramfs, "build", lambda kernel=None: tmp_path)
    monkeypatch.setattr(matrix, "run_entries", run_entries)
    return booted


def test_a_soak_cut_off_keeps_its_boots_and_resume_boots_the_rest(
        monkeypatch, tmp_path):
    import json
    from dataclasses import replace
    import pytest
    from bringuplab.report import record
    allowed = [2]
    booted = fake_lab(monkeypatch, tmp_path, allowed)
    revisions = iter(["a" * 40] + ["b" * 40] * 20)
    real = record.provenance

    def provenance(*args, **kwargs):
        return replace(real(*args, **kwargs), lab_revision=next(revisions))
    monkeypatch.setattr(record, "provenance", provenance)
    started_at = "a" * 40
    with pytest.raises(CutOff):
        soak.run(boots=3, only=["matrix"])
    [kept] = list(tmp_path.glob("soak-*.json"))
    cut = json.loads(kept.read_text())["results"]
    # 3 random machines and the two above-255 ones
    assert [b["name"] for b in cut["boots"]] == booted
    assert (cut["passed"], cut["not_run"], cut["complete"]) == (2, 3, False)
    # each rewrite keeps the revisions the soak started from
    assert json.loads(kept.read_text())["provenance"]["lab_revision"] \
        == started_at
    first = list(booted)
    booted.clear()
    allowed[0] = 99
    rec = soak.run(boots=3, only=["matrix"], resume=str(kept))
    assert not set(booted) & set(first) and len(booted) == 3
    assert [b["name"] for b in rec.results["boots"]] == first + booted
    assert rec.results["complete"] and rec.results["not_run"] == 0
    assert rec.results["passed"] == 5 and rec.ok
    assert rec.results["resumed_from"] == str(kept)
    # another soak's record is not one to go on from
    with pytest.raises(UsageError, match="not `tools/bringup soak "
                       "--boots 4"):
        soak.run(boots=4, only=["matrix"], resume=str(kept))
    other = record.load(kept)
    other.provenance.patches_revision = "0" * 40
    with pytest.raises(UsageError, match="booted patches/ of 000000000000"):
        soak.resumed(other, other.results["command"], "1" * 40)
    with pytest.raises(UsageError, match="not a soak's"):
        soak.resumed(record.Record("bench", True, {}), "make soak", "1")


def test_the_draw_reaches_256_vcpus_and_no_further():
    entries = soak.random_entries(3000, 7)
    sizes = {e.machine.cpus for e in entries}
    assert max(sizes) == 256 and 192 in sizes and 512 not in sizes
    # rare: about one boot in 70
    large = [e for e in entries if e.machine.cpus > soak.TICK_LIMIT]
    assert 0 < len(large) < len(entries) / 35


def test_machines_above_the_tick_limit_are_intel_x2apic_round_robin():
    large = [e for e in soak.random_entries(3000, 7)
             if e.machine.cpus > soak.TICK_LIMIT]
    assert {(e.machine.profile, e.machine.x2apic, e.machine.tcg)
            for e in large} == {("intel", True, "single")}
    assert {e.parallel for e in large} == {True, False}
    small = [e for e in soak.random_entries(300, 7)
             if e.machine.cpus <= soak.TICK_LIMIT]
    assert {e.machine.profile for e in small} == {"intel", "amd"}


def test_each_boot_gets_its_flavour_of_kernel(monkeypatch, tmp_path):
    from pathlib import Path
    from bringuplab.build import kernel
    big = matrix.Entry("m1-intel-256", MachineSpec(256, "2x64x2", 2,
                                                   "intel", True))
    small = matrix.Entry("m2-intel-8", MachineSpec(8, "1x4x2"))
    assert [soak.flavour_of("matrix", e) for e in (big, small)] == [
        soak.LARGE_FLAVOUR, "guest"]
    assert soak.flavour_of("faults", small) == "debug"
    assert soak.flavour_of("debug", matrix.Entry(
        "kasan-16-single", MachineSpec(16))) == "kasan"
    booted = []

    def run_entries(todo, kern, _initrd, _modes, _jobs, _done):
        booted.append(([e.name for e in todo], kern.flavour))
        return [matrix.Row(e, None) for e in todo]
    monkeypatch.setattr(matrix, "run_entries", run_entries)
    monkeypatch.setattr(kernel, "build", lambda flavour: kernel.Kernel(
        tmp_path, tmp_path, flavour))
    guest = kernel.Kernel(Path("guest"), tmp_path, "guest")
    kernels = soak.Kernels(guest, tmp_path, tmp_path, True, 2)
    kernels.boot("matrix", [big, small], lambda row: None)
    assert booted == [(["m1-intel-256"], "hz100"), (["m2-intel-8"], "guest")]
    booted.clear()
    kernels.boot("cmdline", [small], lambda row: None)
    assert booted == [(["m2-intel-8"], "guest")]
