"""The soak counts the judge's statuses: hangs apart from failures."""
from bringuplab import judge, matrix, parse, result, soak
from bringuplab.judge import Expect
from bringuplab.machinespec import MachineSpec
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
    got = soak.summarize("matrix", rows)
    assert got == soak.Summary("matrix", 6, 2, 2, 1, 1)
    assert got.bad == 4
    table = soak.render_summary([got]).splitlines()
    assert table[0].split() == ["scenario", "boots", "passed", "failed",
                                "hung", "infra"]
    assert table[2].split() == ["matrix", "6", "2", "2", "1", "1"]


def test_an_empty_scenario():
    assert soak.summarize("kexec", []) == soak.Summary("kexec", 0, 0, 0, 0, 0)
