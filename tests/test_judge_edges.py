"""Edges of the judge that hand-made mutations of judge.py, parse.py
and bench.py slipped past: each case is a real log of tests/logs (or a
bench sample) on the side of a limit a mutation would move."""
import pytest

from bringuplab.report import bench_tables
from bringuplab.verdict import judge, parse
from bringuplab.report.samples import Sample
from bringuplab.verdict.judge import Expect
from reallogs import line_of, load, replace_first, rules

TOPO = "series-intel-32-2x8x2-topology-hotplug.log"
TOPO_WANT = Expect(32, 32, 32, ("cpus", "hotplug"), "parallel",
                   topologies=((2, 16, 2),))
# Two kernels: the second kexec'd with nox2apic; both parallel, both
# checked the topology of 2 packages, 4 cores, 2 threads.
KEXEC = "series-kexec-x2apic-to-nox2apic.log"
KEXEC_WANT = Expect(8, 8, 8, ("cpus", "kexec"), "parallel",
                    topologies=((2, 4, 2),))
SELFTEST = "series-intel-16-parallel.log"


def verdict(text: str, want: Expect) -> judge.Verdict:
    return judge.judge(parse.parse(text), want)


def test_the_kexec_log_passes():
    assert verdict(load(KEXEC), KEXEC_WANT).ok


@pytest.mark.parametrize("want,rule", [
    # more CPUs than expected is as wrong as fewer (maxcpus=, nosmt)
    (Expect(32, 31, 32, ("cpus", "hotplug"), "parallel"), "online"),
    (Expect(32, 32, 31, ("cpus", "hotplug"), "parallel"), "brought-up")])
def test_more_cpus_than_expected_fail(want, rule):
    assert rules(verdict(load(TOPO), want)) == (rule,)


def second(text: str, old: str, new: str) -> str:
    """`text` with `old` replaced in the second kernel's part only."""
    first, rest = text.split("LAB: begin", 1)
    cut = rest.index("Linux version")
    return first + "LAB: begin" + rest[:cut] + replace_first(
        rest[cut:], old, new)


def test_the_mode_is_the_first_kernels():
    """A kexec chain's later kernels may be told another mode (the
    Debian image's round trip); the boot's mode is its first's."""
    serial_later = second(load(KEXEC), "smpboot: parallel bringup",
                          "smpboot: serial bringup")
    assert parse.parse(serial_later).mode == "parallel"
    assert verdict(serial_later, KEXEC_WANT).ok
    serial_first = replace_first(load(KEXEC), "smpboot: parallel bringup",
                                 "smpboot: serial bringup")
    assert parse.parse(serial_first).mode == "serial"
    assert rules(verdict(serial_first, KEXEC_WANT)) == ("mode",)


@pytest.mark.parametrize("old,new,rule,why", [
    ("topology=ok", "topology=cpu5:thread_siblings", "topology",
     "sysfs topology (kernel 2): cpu5:thread_siblings does not match the "
     "CPUs' IDs"),
    ("packages=2 cores=4", "packages=1 cores=8", "topology-counts",
     "sysfs topology (kernel 2): packages, cores, threads (1, 8, 2), "
     "machine (2, 4, 2)"),
    ("online_count=8", "online_count=7", "online",
     "sysfs (kernel 2): 7 of 8 CPUs online")])
def test_the_kexecd_kernels_topology_is_checked(old, new, rule, why):
    """Each kernel of the chain is checked, and named by its place."""
    got = verdict(second(load(KEXEC), old, new), KEXEC_WANT)
    assert rules(got) == (rule,)
    assert [r.text for r in got.reasons] == [why]


def test_selftest_all_results_are_checked():
    failed = replace_first(load(SELFTEST), "ok 1 selftests:",
                           "not ok 1 selftests:")
    want = Expect(16, 16, 16, ("cpus", "hotplug", "selftest-all"),
                  "parallel")
    assert verdict(load(SELFTEST), want).ok
    assert rules(verdict(failed, want)) == ("selftest",)


def test_a_qemu_error_after_its_warnings_is_a_refusal():
    """However many warnings QEMU prints first (the AMD profile's), an
    error before the guest's first line is a machine it refused."""
    warning = line_of(load("base-amd-nosmt-all-online.log"),
                      "qemu-system-x86_64: warning:")
    header = load(TOPO).splitlines(keepends=True)[0]
    text = (header + warning * 6 + "qemu-system-x86_64: -smp 600: Invalid "
            "SMP CPUs 600. The max CPUs supported by machine 'pc-q35-8.1' "
            "is 288\n")
    got = verdict(text, TOPO_WANT)
    assert got.status == judge.INFRA
    assert rules(got) == ("qemu",)


def test_a_qemu_line_after_the_guests_is_no_refusal():
    text = load(TOPO) + "qemu-system-x86_64: terminating on signal 15\n"
    assert parse.parse(text).qemu_errors == []


V3 = "ours+calibration+workqueue-parallel"


def sample(variant: str, host_ms: float) -> Sample:
    return Sample("64=x single", 64, "single", "intel", variant, 1,
                        "pass", host_ms, "parallel", "", {}, host_ms)


@pytest.mark.parametrize("v3_ms,result", [(80, "met"), (82, "missed")])
def test_a_target_has_no_slack(v3_ms, result):
    """RR 64's limit is 0.8: 0.82 misses it."""
    rows = bench_tables.target_rows([sample(V3, v3_ms),
                              sample("upstream-parallel", 100)])
    assert rows[0][2:] == [f"{v3_ms / 100:.2f}", "0.80", "1", result]


@pytest.mark.parametrize("edit,rule", [
    # a selftest that never reported (hung, or its line lost)
    (lambda t: t.replace(line_of(t, "ok 2 selftests:"), "", 1), "selftest"),
    # no plan line: results cannot be checked against it
    (lambda t: t.replace("\n1..2\n", "\n", 1), "selftest")])
def test_the_tap_results_are_checked_against_their_plan(edit, rule):
    want = Expect(16, 16, 16, ("cpus", "hotplug", "selftest"), "parallel")
    text = edit(load(SELFTEST))
    assert parse.parse(text).tap.planned in (2, None)
    assert rules(verdict(text, want)) == (rule,)


TWO = "series-intel-2-1x2x1-parallel.log"


def test_a_two_vcpu_machines_mode_is_checked():
    """One AP to start is a bringup with a mode like any other (make
    soak's m038 machine, v3 parallel)."""
    assert verdict(load(TWO), Expect(2, 2, 2, mode="parallel")).ok
    assert rules(verdict(load(TWO), Expect(2, 2, 2, mode="serial"))) == \
        ("mode",)
