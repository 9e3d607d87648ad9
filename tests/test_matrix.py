"""A matrix entry's expectations, and its rows judged from real logs."""
import re
from pathlib import Path
from typing import List

import pytest

from bringuplab.build import kernel
from bringuplab.guest import boot
from bringuplab.runs import matrix
from bringuplab.verdict import judge, result
from bringuplab.verdict.judge import Expect
from reallogs import load, replace_first

# 32 vCPUs 2x8x2 in two NUMA nodes, brought up in parallel: the
# machine of the demo matrix.
TOPO = "series-intel-32-2x8x2-topology-hotplug.log"

# A bzImage path with no build beside it (NR_CPUS unknown: 512)
BZ = kernel.of_image(Path("bzImage"))


def test_an_entry_expects_its_machine_and_its_mode():
    par, ser = matrix.MATRICES["demo"]
    assert matrix.expect(par, modes=True) == Expect(
        32, 32, 32, ("cpus",), "parallel", topologies=((2, 16, 2),))
    assert matrix.expect(ser, modes=True).mode == "serial"
    # a base kernel (no series) prints no mode line
    assert matrix.expect(ser, modes=False).mode is None


@pytest.mark.parametrize("name,online,boot_cpus", [
    ("intel-8-maxcpus2-then-online", 8, 2),
    ("intel-8-nosmt-then-smt-on", 4, 4),
    ("intel-8-maxcpus4-smt", 4, 4),
    ("intel-1", 1, 1),
])
def test_an_entry_expects_its_cpu_counts(name, online, boot_cpus):
    entry = next(e for e in matrix.MATRICES["check"] if e.name == name)
    want = matrix.expect(entry, modes=True)
    assert (want.vcpus, want.online, want.boot) == (entry.machine.cpus, online,
                                                     boot_cpus)
    assert want.plan == entry.plan


def test_a_fault_entry_wants_and_forbids_its_lines():
    entry = matrix.fault("tscwarp", 6)
    want = matrix.expect(entry, modes=True)
    assert want.present == entry.dmesg and want.absent == entry.absent
    assert want.online == 8 and want.plan == ("cpus", "hotplug")
    assert matrix.expect(matrix.fault("nosipi", 3), True).online == 7



def test_a_failed_cpu_is_retried_alone_only_after_a_parallel_start():
    """rmstall: the CPU is started again alone, which only the parallel
    bringup does; nosipi: never. Serial entries say so on the command
    line and in their names; the guest's online-fails step gets lab.cpu."""
    retry = matrix.RETRY_LINE.format(cpu=1)
    par = matrix.fault("rmstall", 1, tcg="multi")
    assert par.restart == (1, matrix.GIVE_UP.format(cpu=1), retry)
    assert retry not in par.dmesg + par.absent
    assert matrix.expect(par, True).restart == par.restart
    assert par.append == "smpboot_fault=rmstall:1 lab.cpu=1"
    assert par.name == "fault-rmstall-cpu1-8-multi"
    ser = matrix.fault("rmstall", 5, parallel=False)
    assert ser.absent == (matrix.RETRY_LINE.format(cpu=5),)
    assert ser.restart is None
    assert ser.append == ("smpboot_fault=rmstall:5 lab.cpu=5 "
                          f"{matrix.SERIAL}")
    assert ser.name == "fault-rmstall-cpu5-8-single-serial"
    nosipi = matrix.fault("nosipi", 3, x2apic=True)
    assert nosipi.restart == (3, matrix.GIVE_UP.format(cpu=3),
                              matrix.RETRY_LINE.format(cpu=3))
    assert nosipi.name == "fault-nosipi-cpu3-8-single-x2apic"
    assert matrix.fault("nosipi", 3, parallel=False).absent == (
        matrix.RETRY_LINE.format(cpu=3),)

def rows_of(monkeypatch, tmp_path: Path, text: str,
            entries: List[matrix.Entry], modes: bool) -> List[matrix.Row]:
    """Run the entries, each boot showing `text`, its log named as
    boot.run names it."""
    def fake_run(spec: boot.BootSpec, quiet: bool = False):
        log = tmp_path / f"{spec.label}-20261203-101010-4242.log"
        log.write_text(text)
        return result.of_log(text, spec.expectations(), str(log))
    monkeypatch.setattr(boot, "run", fake_run)
    monkeypatch.setattr(boot, "kernel_nr_cpus", lambda kernel: 512)
    return matrix.run_entries(entries, BZ, None, modes)


def test_a_boot_expected_parallel_that_ran_serially_fails(monkeypatch,
                                                          tmp_path):
    """The demo's two entries on one real parallel boot: the serial
    entry's boot ran in parallel mode, and the parallel entry's boot
    edited to have run serially fails the same way."""
    demo = matrix.MATRICES["demo"]
    rows = rows_of(monkeypatch, tmp_path, load(TOPO), demo, True)
    assert [r.result.verdict for r in rows] == [judge.PASS, judge.FAIL]
    assert rows[1].result.reasons == ["mode parallel, expected serial"]
    assert rows[1].problems == ["mode parallel, expected serial"]
    assert rows[0].problems == []
    serial = replace_first(load(TOPO), "smpboot: parallel bringup of",
                           "smpboot: serial bringup of")
    rows = rows_of(monkeypatch, tmp_path, serial, demo, True)
    assert [r.ok for r in rows] == [False, True]
    assert rows[0].result.rules == ["mode"]
    # without a series no mode is expected
    rows = rows_of(monkeypatch, tmp_path, serial, demo, False)
    assert [r.ok for r in rows] == [True, True]


def test_the_table_shows_the_judges_verdict_and_reasons(monkeypatch,
                                                        tmp_path):
    rows = rows_of(monkeypatch, tmp_path, load(TOPO),
                   matrix.MATRICES["demo"], True)
    lines = matrix.render(rows).splitlines()
    assert lines[2].split()[:4] == ["demo-32", "single", "xapic", "pass"]
    assert lines[3].split()[:4] == ["demo-32-serial", "single", "xapic",
                                    "fail"]
    assert lines[3].endswith("mode parallel, expected serial")


def test_aps_left_in_x2apic_mode_under_an_xapic_kernel(monkeypatch,
                                                       tmp_path):
    """kexec from an x2APIC kernel into one told nox2apic: the first v2
    read the xAPIC ID register of APs still in x2APIC mode, found no CPU
    number for any, and the second kernel came up alone after 90 s."""
    entry = next(e for e in matrix.MATRICES["check"]
                 if e.name == "intel-8-kexec-x2apic-to-nox2apic")
    assert entry.append.split() == ["lab.kexec=1", "lab.kexec_add=nox2apic"]
    good, = rows_of(monkeypatch, tmp_path,
                    load("series-kexec-x2apic-to-nox2apic.log"), [entry],
                    True)
    assert good.ok, good.problems
    # guest/init added the argument to the next kernel's command line
    assert "lab.plan=cpus,kexec nox2apic lab.kexec=0" in load(
        "series-kexec-x2apic-to-nox2apic.log")
    bad, = rows_of(monkeypatch, tmp_path,
                   load("v2-kexec-nox2apic-aps-left-in-x2apic-read-xapic-"
                        "id.log"), [entry], True)
    assert not bad.ok
    assert "kernel 2: brought up 1 of 8 CPUs" in bad.result.reasons


def test_an_unstoppable_cpu_costs_only_itself_in_both_modes():
    for parallel in (True, False):
        entry = matrix.fault("unstoppable", 3, 8, "single", parallel)
        assert entry.plan == ("cpus", "online-fails")
        assert entry.expect_online == 7 and entry.restart is None
        assert "lab.cpu=3" in entry.append
        assert entry.absent == (matrix.RETRY_LINE.format(cpu=3),)
        assert len(entry.dmesg) == 2
        assert re.search(entry.dmesg[0], "smpboot: CPU3 did not come up "
                         "and could not be stopped: it is not started "
                         "again")
        # and the later online refused
        assert re.search(entry.dmesg[1], "cpuhp: CPU3: not started, it "
                         "may still run from an earlier attempt")
        # v2's veto of every later CPU is not what it must say
        assert not re.search(entry.dmesg[0], "smpboot: CPU3 did not come "
                             "up within 10 seconds and could not be "
                             "stopped: no more CPUs are started")


def test_a_wait_for_a_dead_or_stuck_cpu_gives_it_up():
    for kind in ("deadwait", "stuckwait"):
        entry = matrix.fault(kind, 2)
        assert entry.plan == ("cpus", "online-fails")
        assert entry.expect_online == 7
        assert "smpboot_fault=" + kind + ":2" in entry.append
    dead = matrix.fault("deadwait", 2)
    assert re.search(dead.dmesg[0], "cpuhp: CPU2 did not come up, stopped")
    # v2's lines, x86's own, still match
    assert re.search(dead.dmesg[0],
                     "smpboot: CPU2 did not come up, put back under INIT")
    assert re.search(dead.dmesg[0], "smpboot: CPU2 did not come up "
                     "within 10 seconds, put back under INIT")
    assert not re.search(dead.dmesg[0], "cpuhp: CPU2 did not come up and "
                         "could not be stopped: it is not started again")
    # a CPU found STUCK is not taken for stopped
    stuck = matrix.fault("stuckwait", 2)
    assert re.search(stuck.dmesg[0], "cpuhp: CPU2 did not come up and could "
                     "not be stopped: it is not started again")
    assert not re.search(stuck.dmesg[0], "cpuhp: CPU2 did not come up, "
                         "stopped")
