"""The judge, rule by rule (README "One boot", what pass means): each
case is a real console log of tests/logs that passes, edited to break
exactly one rule, and exactly that rule must fire."""
import re
from dataclasses import replace
from pathlib import Path
from typing import Callable, List, Tuple

import pytest

from bringuplab.runs import matrix, soak
from bringuplab.verdict import judge, parse
from bringuplab.verdict.judge import Expect
from bringuplab.guest.machinespec import MachineSpec
from reallogs import drop_line, insert_after, load, replace_first, rules

# 32 vCPUs 2x8x2 brought up in parallel, the topology checked after the
# bringup and after every CPU went off and on.
TOPO = "series-intel-32-2x8x2-topology-hotplug.log"
TOPO_WANT = Expect(32, 32, 32, ("cpus", "hotplug"), "parallel",
                   topologies=((2, 16, 2),))
# 16 vCPUs with the cpu-hotplug selftests; from before the guest
# checked the topology (so none is expected).
SELFTEST = "series-intel-16-parallel.log"
SELFTEST_WANT = Expect(16, 16, 16, ("cpus", "hotplug", "selftest"),
                       "parallel")
# The debug kernel's injected faults (series + lab overlay), which pass
# their entries: a CPU given up and started again alone, and a TSC warp
# caught by the serial test, with a line it is given to forbid.
RMSTALL = "v2-fault-rmstall-cpu1-8-multi.log"
TSCWARP = "v2-fault-tscwarp-cpu6-8-single.log"
# CPU15, the last kicked, stuck with the lock after every other AP had
# passed it: given up, nobody held up, so not started again.
LAST = "v2-fault-rmstall-cpu15-16-last-to-the-lock.log"
LAST_WANT = matrix.fault("rmstall", 15, 16, "single", True, True)
AGAIN = r"CPU\d+: starting it again, alone"
# One vCPU, no AP to start; a base kernel's log, given the series'
# mode line.
ONE = "good-intel-1cpu.log"
ONE_MODE = "[    0.331700] smpboot: serial bringup of 0 CPUs\n"


def soak_entry(scenario: str, name: str) -> matrix.Entry:
    [entry] = [e for e in soak.fixed()[scenario] if e.name == name]
    return entry


# the soak's machine with APIC IDs above 255 (package 4 present)
[X2APIC_HIGH] = [e for e in soak.random_entries(3, 1)
                 if e.name == "m-x2apic-ids-above-255-single"]


def entry_want(entry: matrix.Entry) -> Expect:
    return matrix.expect(entry, modes=True)


def one_cpu(text: str) -> str:
    return insert_after(text, "smp: Brought up 1 node, 1 CPU", ONE_MODE)


BASES: List[Tuple[str, Expect, Callable[[str], str]]] = [
    (TOPO, TOPO_WANT, lambda t: t),
    (SELFTEST, SELFTEST_WANT, lambda t: t),
    (RMSTALL, entry_want(matrix.fault("rmstall", 1, 8, "multi")),
     lambda t: t),
    (TSCWARP, replace(entry_want(matrix.fault("tscwarp", 6)),
                      absent=(AGAIN,)), lambda t: t),
    (ONE, Expect(1, 1, 1, mode="parallel"), one_cpu),
    # one vCPU: either mode is right
    (ONE, Expect(1, 1, 1, mode="serial"), one_cpu),
    (LAST, entry_want(LAST_WANT), lambda t: t),
]


def verdict(text: str, want: Expect) -> judge.Verdict:
    return judge.judge(parse.parse(text), want)


@pytest.mark.parametrize("log,want,base", BASES)
def test_the_real_logs_pass(log, want, base):
    got = verdict(base(load(log)), want)
    assert got == judge.Verdict(judge.PASS, ()), got
    assert got.ok


def warn(text: str) -> str:
    return insert_after(text, "LAB: cpus ", "[   20.000000] WARNING: CPU: 3 "
                        "PID: 1 at kernel/cpu.c:1234 cpu_up+0x1/0x2\n")


def tsc_off(text: str) -> str:
    return insert_after(text, "smp: Brought up", "[    1.300000] tsc: "
                        "Marking TSC unstable due to check_tsc_sync_source "
                        "failed\n")


# rule, case, base log, edit, a piece of the reason
CASES = [
    ("finished", "no LAB: done", 0,
     lambda t: drop_line(t, "LAB: done"), "did not finish /init"),
    ("brought-up", "one CPU fewer", 0,
     lambda t: replace_first(t, "Brought up 2 nodes, 32 CPUs",
                             "Brought up 2 nodes, 31 CPUs"),
     "kernel 1: brought up 31 of 32 CPUs"),
    ("brought-up", "no smp: Brought up line", 0,
     lambda t: drop_line(t, "smp: Brought up"), "no 'smp: Brought up'"),
    ("brought-up", "a second kernel with fewer", 0,
     lambda t: insert_after(t, "LAB: step hotplug", "[   90.000000] smp: "
                            "Brought up 2 nodes, 30 CPUs\n"),
     "kernel 2: brought up 30 of 32 CPUs"),
    ("online", "sysfs shows one CPU fewer", 0,
     lambda t: replace_first(t, "online_count=32", "online_count=31"),
     "sysfs (kernel 1): 31 of 32 CPUs online"),
    ("online", "no cpus line", 0,
     lambda t: drop_line(t, "LAB: cpus "), "no 'cpus' line"),
    ("offline-stale", "an offline CPU at state 95", 0,
     lambda t: replace_first(t, "offline_stale= ", "offline_stale=7:95 "),
     "(cpu:state): 7:95"),
    ("topology", "masks wrong after the bringup", 0,
     lambda t: replace_first(t, "topology=ok",
                             "topology=cpu5:thread_siblings"),
     "(kernel 1): cpu5:thread_siblings does not match"),
    ("topology", "masks wrong after hotplug", 0,
     lambda t: replace_first(t, "cpus=31 topology=ok", "cpus=31 "
                             "topology=cpu9:die_cpus"),
     "(after hotplug): cpu9:die_cpus does not match"),
    ("topology", "no check on the cpus line", 0,
     lambda t: replace_first(t, " topology=ok packages=2 cores=16 "
                             "threads=2\n", "\n"), "no topology check"),
    ("topology-counts", "one package counted", 0,
     lambda t: replace_first(t, "topology=ok packages=2",
                             "topology=ok packages=1"),
     "threads (1, 16, 2), machine (2, 16, 2)"),
    ("step", "hotplug failed", 0,
     lambda t: replace_first(t, "step hotplug result=pass",
                             "step hotplug result=fail"),
     "step hotplug: fail"),
    ("step", "hotplug missing", 0,
     lambda t: drop_line(t, "LAB: step hotplug"), "step hotplug: missing"),
    ("selftest", "a test failed", 1,
     lambda t: replace_first(t, "ok 2 selftests: cpu-hotplug: cpu-on-off",
                             "not ok 2 selftests: cpu-hotplug: cpu-on-off")
     .replace("cpu-on-off-test.sh\n", "cpu-on-off-test.sh # exit=1\n", 1),
     "selftest: 1 failed"),
    ("selftest", "a test skipped is no pass", 1,
     lambda t: replace_first(t, "cpu-on-off-test.sh\nLAB:",
                             "cpu-on-off-test.sh # SKIP\nLAB:"),
     "selftest: 1 skipped"),
    ("selftest", "no TAP results", 1,
     lambda t: re.sub(r"^(not )?ok \d+ .*\n", "", t, flags=re.M),
     "selftest: no TAP results"),
    ("splat", "a WARN after the bringup", 0, warn, "1 splat(s): WARN: "),
    ("splat", "the TSC turned off", 0, tsc_off, "1 splat(s): tsc-off: "),
    ("present", "a wanted line missing", 3,
     lambda t: drop_line(t, "TSC synchronization [CPU#"),
     "no line /TSC synchronization"),
    ("absent", "a forbidden line", 3,
     lambda t: insert_after(t, "Marking TSC unstable", "[    1.900000] "
                            "smpboot: CPU6: starting it again, alone\n"),
     "line /CPU\\d+: starting it again"),
    ("restart", "others stopped, it not started again alone", 2,
     lambda t: drop_line(t, "CPU1: starting it again, alone"),
     "CPUs 3,5,7 were stopped with CPU1 and started again, but CPU1 was "
     "not"),
    ("restart", "started again alone, nobody stopped", 6,
     lambda t: insert_after(t, "CPU15 did not come up", "[   10.970000] "
                            "smpboot: CPU15: starting it again, alone\n"),
     "CPU15 was started again alone, though no CPU"),
    ("mode", "a parallel boot ran serially", 0,
     lambda t: replace_first(t, "smpboot: parallel bringup of 31",
                             "smpboot: serial bringup of 31"),
     "mode serial, expected parallel"),
    ("mode", "no mode line", 0,
     lambda t: drop_line(t, "smpboot: parallel bringup of"),
     "mode None, expected parallel"),
    ("mode", "one vCPU, no mode line", 4,
     lambda t: drop_line(t, "serial bringup of 0 CPUs"),
     "no bringup mode line"),
]


@pytest.mark.parametrize("rule,case,base,edit,why", CASES,
                         ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_each_rule_fails_a_real_log_broken_for_it(rule, case, base, edit,
                                                  why):
    log, want, prepare = BASES[base]
    got = verdict(edit(prepare(load(log))), want)
    assert got.status == judge.FAIL and not got.ok
    assert rules(got) == (rule,), got.reasons
    assert why in got.reasons[0].text, got.reasons


def test_every_rule_has_a_case():
    cased = {case[0] for case in CASES} | {"killed"}
    assert cased == {rule for rule, _ in judge.RULES}


def test_the_expected_splat_is_excused_and_only_it():
    """The tscwarp entry wants the TSC turned off by the point-to-point
    test: that splat is no failure of its boot, but of any other, and
    another splat still fails it."""
    want = entry_want(matrix.fault("tscwarp", 6))
    text = load(TSCWARP)
    facts = parse.parse(text)
    assert [s.split(":")[0] for s in facts.splats] == ["tsc-off"]
    assert judge.judge(facts, want).ok
    got = judge.judge(facts, replace(want, present=()))
    assert rules(got) == ("splat",)
    assert rules(verdict(warn(text), want)) == ("splat",)


# Every "result=fail" guest/init can print, with its shell variables.
INIT = Path(__file__).resolve().parents[1] / "guest" / "init"
FAIL_LINES = re.findall(r'lab "step (\S+) (result=fail[^"]*)"',
                        INIT.read_text())


def test_the_guest_fails_steps_in_many_places():
    assert len(FAIL_LINES) >= 10
    assert {step for step, _ in FAIL_LINES} >= {
        "smt-on", "hotplug", "online-all", "online-fails", "kexec",
        "suspend", "stress", "trace"}


@pytest.mark.parametrize("step,fail", FAIL_LINES,
                         ids=[f"{s} {f}" for s, f in FAIL_LINES])
def test_every_failed_guest_step_fails_the_boot(step, fail):
    """The TOPO log with one more step in its plan: passed, it passes;
    with any of the guest's failure lines for that step, it fails on
    that step alone."""
    name = "dance" if step == "$s" else step
    want = replace(TOPO_WANT, plan=tuple(dict.fromkeys(TOPO_WANT.plan
                                                       + (name,))))
    text = load(TOPO)
    good = insert_after(text, "LAB: step hotplug",
                        f"LAB: step {name} result=pass\n")
    assert verdict(good, want).ok
    bad = insert_after(text, "LAB: step hotplug",
                       f"LAB: step {name} {fail}\n")
    got = verdict(bad, want)
    assert rules(got) == ("step",), got.reasons
    assert got.reasons[0].text == f"step {name}: fail"


def killed(text: str, why: str = "silent for 300 s") -> str:
    return text + parse.killed_line(why)


def test_a_killed_boot_is_a_hang_whatever_it_shows():
    got = verdict(killed(load(TOPO)), TOPO_WANT)
    assert got.status == judge.HANG and not got.ok
    assert [r.text for r in got.reasons] == [
        "timeout: QEMU killed (silent for 300 s)"]


def test_a_silent_hang_in_a_cpu_offline_is_a_hang_with_its_reasons():
    """Soak 2026-12-01 03:03, kasan-16-multi-serial: the hotplug step
    offlined and onlined CPUs 1, 10 and 11, then the offline of CPU 12
    never ended; no line, no RCU stall report. Killed, it is a hang
    whose reasons are the log's: every CPU up and online, the hotplug
    step never reported. Not killed, the same log is a fail."""
    text = load("soak-kasan16-mttcg-serial-offline-silent-hang.log")
    want = Expect(16, 16, 16, ("cpus", "hotplug"), "serial")
    got = verdict(killed(text, "killed at the deadline of 1800 s"), want)
    assert got.status == judge.HANG
    assert [r.text for r in got.reasons] == [
        "timeout: QEMU killed (killed at the deadline of 1800 s)",
        "step hotplug: missing"]
    got = verdict(text, want)
    assert got.status == judge.FAIL
    assert rules(got) == ("finished", "step")


def test_a_boot_killed_early_is_a_hang_before_any_ap():
    """Killed while the boot CPU was still alone: no bringup line, no
    guest; an empty log would also say that Linux never started."""
    text = load("hang-killed-early.log")
    facts = parse.parse(killed(text))
    assert facts.boots == 1 and facts.bringup_start is None
    got = judge.judge(facts, Expect(8, 8, 8))
    assert got.status == judge.HANG
    assert rules(got) == ("killed", "brought-up", "online")
    assert judge.judge(parse.parse(text), Expect(8, 8, 8)).status \
        == judge.FAIL


def test_the_periodic_tick_livelock_at_170_vcpus_is_a_hang():
    """Soak 2026-12-01 23:30 (170 vCPUs on one host thread): every CPU
    up, then silent before the guest's /init: hung with the bringup
    done and no cpus line."""
    text = killed(load("soak-rr170-periodic-tick-livelock.log"),
                  "silent for 300 s")
    got = verdict(text, Expect(170, 170, 170, mode="parallel"))
    assert got.status == judge.HANG
    assert rules(got) == ("killed", "online")


def test_a_machine_qemu_refused_is_an_infrastructure_error():
    header = load(TOPO).splitlines()[0]
    text = (f"{header}\nqemu-system-x86_64: -smp 600: Invalid SMP CPUs "
            "600. The max CPUs supported by machine 'pc-q35-8.1' is 288\n")
    got = verdict(text, TOPO_WANT)
    assert got.status == judge.INFRA and not got.ok
    assert rules(got) == ("qemu",)
    assert got.reasons[0].text.startswith(
        "QEMU refused the machine: qemu-system-x86_64: -smp 600")


def test_a_qemu_warning_before_a_panic_is_no_infrastructure_error():
    """The AMD profile's hyperthreading warning heads a boot which
    panicked before any AP (make soak 2026-11-30 23:40): the kernel
    ran, so the boot failed."""
    text = load("soak-amd6-timer-check-panic-starved-host.log")
    got = verdict(text, Expect(6, 6, 6))
    assert got.status == judge.FAIL
    assert rules(got) == ("finished", "brought-up", "online", "splat")
    # and a QEMU error after which the kernel still ran is no refusal
    error = "qemu-system-x86_64: error: something\n"
    lines = load(TOPO).split("\n", 1)
    assert verdict(f"{lines[0]}\n{error}{lines[1]}", TOPO_WANT).ok


def fault_want(kind: str, cpu: int, cpus: int = 8, tcg: str = "single",
               parallel: bool = True) -> Expect:
    """A fault entry's expectations, without the topology: these logs
    are from before the guest checked it."""
    return replace(entry_want(matrix.fault(kind, cpu, cpus, tcg, parallel)),
                   topologies=())


HOTPLUG = ("cpus", "hotplug")
ALL = ("finished", "step", "splat")

# Real boots and their verdicts: the lab's history of what went wrong.
REAL = [
    ("good-intel-xapic-4cpu.log", Expect(4, 4, 4), ()),
    ("good-amd-x2apic-4cpu-selftest.log",
     Expect(4, 4, 4, ("cpus", "hotplug", "selftest")), ()),
    # 170 vCPUs, APIC IDs up to 289: the firmware hands over in x2APIC
    ("soak-x2apic-170cpu-ids-above-255.log",
     Expect(170, 170, 170, mode="parallel"), ()),
    ("series-intel-16-serial.log", replace(SELFTEST_WANT, mode="serial"), ()),
    ("series-intel-16-timing.log", Expect(16, 16, 16, mode="parallel"), ()),
    ("series-rr64-parallel-timing-waits.log",
     Expect(64, 64, 64, mode="parallel"), ()),
    ("good-intel-1cpu.log", Expect(1, 1, 1), ()),
    # QEMU's AMD profile shows Linux no SMT: nosmt keeps every CPU
    ("base-amd-nosmt-all-online.log", Expect(8, 8, 8), ()),
    ("states-rr64-parallel-trace-cpus0-2.log",
     Expect(64, 64, 64, ("cpus", "trace"), "parallel"), ()),
    # 64 idle APs slow the boot CPU's initcalls 40 times: slow, passed
    ("rr64-tick-post-bringup-slow.log",
     Expect(64, 64, 64, mode="parallel", topologies=((2, 32, 2),)), ()),
    ("rr64-maxcpus1-post-bringup.log",
     Expect(64, 1, 1, mode="parallel", topologies=((2, 32, 2),)), ()),
    ("v2-fault-nosipi-cpu3-8-single.log",
     entry_want(matrix.fault("nosipi", 3)), ()),
    ("v2-fault-rmstall-cpu1-8-multi.log",
     entry_want(matrix.fault("rmstall", 1, 8, "multi")), ()),
    ("v2-fault-rmstall-cpu5-8-single-serial.log",
     entry_want(matrix.fault("rmstall", 5, 8, "single", False)), ()),
    ("v2-fault-tscwarp-cpu6-8-single.log",
     entry_want(matrix.fault("tscwarp", 6)), ()),
    ("v2-fault-tscwarp-cpu6-8-single-serial.log",
     entry_want(matrix.fault("tscwarp", 6, parallel=False)), ()),
    # a serial bringup's fault judged as a parallel one: the CPUs it
    # starts after the give-up are started for the first time
    ("v2-fault-rmstall-cpu5-8-single-serial.log",
     entry_want(matrix.fault("rmstall", 5, 8, "single")), ("mode",)),
    (LAST, entry_want(LAST_WANT), ()),
    # a CPU INIT cannot stop: v2 vetoed every later start, so its serial
    # bringup ended at it (3 of 7 up) and its online-fails step could
    # not take another CPU off and on; v3 loses only that CPU
    # (v2 printed neither v3's give-up nor its refusal of a later online)
    ("v2-fault-unstoppable-cpu3-8-single-serial.log",
     entry_want(matrix.fault("unstoppable", 3, 8, "single", False)),
     ("brought-up", "online", "step", "splat", "present", "present")),
    ("v2-fault-unstoppable-cpu3-8-multi.log",
     entry_want(matrix.fault("unstoppable", 3, 8, "multi")),
     ("step", "splat", "present", "present")),
    # v3: only the CPU INIT cannot stop is lost, in both modes, and
    # another CPU still goes off and on; never started again, not even
    # alone
    ("v3-fault-unstoppable-cpu3-8-single-serial.log",
     entry_want(matrix.fault("unstoppable", 3, 8, "single", False)), ()),
    ("v3-fault-unstoppable-cpu3-8-multi.log",
     entry_want(matrix.fault("unstoppable", 3, 8, "multi")), ()),
    # a wait which finds the CPU DEAD or STUCK fails at once and the CPU
    # is put back under INIT (v2 took it for alive)
    ("v3-fault-deadwait-cpu2-8-single.log",
     entry_want(matrix.fault("deadwait", 2)), ()),
    # ... of the x86 handshake of the earlier v3: a STUCK CPU taken for
    # stopped ("put back under INIT"), which the judge now refuses
    ("v3-fault-stuckwait-cpu4-8-single-serial.log",
     entry_want(matrix.fault("stuckwait", 4, 8, "single", False)),
     ("present", "present")),
    # the handshake in the hotplug core: a DEAD CPU is stopped, a STUCK
    # one stays stuck; an unstoppable CPU costs only itself
    ("v3core-fault-deadwait-cpu2-8-single.log",
     entry_want(matrix.fault("deadwait", 2)), ()),
    ("v3core-fault-stuckwait-cpu4-8-single-serial.log",
     entry_want(matrix.fault("stuckwait", 4, 8, "single", False)), ()),
    ("v3core-fault-unstoppable-cpu3-8-single-serial.log",
     entry_want(matrix.fault("unstoppable", 3, 8, "single", False)), ()),
    ("v3core-fault-unstoppable-cpu3-8-multi.log",
     entry_want(matrix.fault("unstoppable", 3, 8, "multi")), ()),
    # APs which identified themselves before their release, found by
    # the package look-up before they were numbered: the CPUs of
    # physical package 4 took the boot CPU's logical package 0 (no
    # "Converting physical 4" line); with the fix they get package 1
    ("v3-logical-package-from-unnumbered-ap.log",
     entry_want(X2APIC_HIGH), ("present",)),
    ("v3core-x2apic-ids-above-255.log", entry_want(X2APIC_HIGH), ()),
    # the STUCK CPU's log judged as one found DEAD: no "stopped" line,
    # and "could not be stopped" is a splat there
    ("v3core-fault-stuckwait-cpu4-8-single-serial.log",
     entry_want(matrix.fault("deadwait", 4, 8, "single", False)),
     ("splat", "present")),
    # the v3 unstoppable log judged as a CPU INIT stopped: its line is
    # not there, and "could not be stopped" is a splat there
    ("v3-fault-unstoppable-cpu3-8-single-serial.log",
     entry_want(matrix.fault("nosipi", 3, 8, "single", False)),
     ("splat", "present")),
    # ... judged as a CPU INIT stopped, and the other way round
    ("v2-fault-unstoppable-cpu3-8-single-serial.log",
     entry_want(matrix.fault("nosipi", 3, 8, "single", False)),
     ("brought-up", "online", "step", "splat", "present")),
    ("v2-fault-nosipi-cpu3-8-single.log",
     entry_want(matrix.fault("unstoppable", 3)),
     ("splat", "present", "present")),
    # the guest's cpus line cut by kernel messages (the TSC's refined
    # calibration, its clocksource), once and twice: made whole again
    ("series-lab-line-cut-by-tsc-refine.log",
     entry_want(soak_entry("cmdline", "nr-cpus-below-present")), ()),
    ("series-lab-line-cut-twice-mttcg.log",
     entry_want(soak_entry("hotplug", "stress-1000-mttcg")), ()),
    # the same log expecting more CPUs
    ("good-intel-xapic-4cpu.log", Expect(8, 8, 8), ("brought-up", "online")),
    ("missing-cpus-maxcpus2.log", Expect(4, 4, 4), ("brought-up", "online")),
    ("panic-no-init.log", Expect(2, 2, 2), ("finished", "online", "splat")),
    # a lockdep report spliced into a good boot
    ("lockdep-splat.log", Expect(4, 4, 4), ("splat",)),
    ("good-intel-xapic-4cpu.log", Expect(4, 4, 4, ("cpus", "selftest")),
     ("step", "selftest")),
    # the base kernel panics after kexec with interrupt remapping
    ("base-kexec-ir-timer-panic.log", Expect(8, 8, 8, ("cpus", "kexec")),
     ALL),
    # every CPU up and the steps passed, then a splat
    ("soak-mttcg24-rcu-stall-host-overcommit.log",
     Expect(24, 24, 24, mode="serial"), ("splat",)),
    ("soak-debug32-mttcg-rcu-stall-hotplug.log", Expect(32, 32, 32, HOTPLUG),
     ("splat",)),
    ("kasan-la57-false-wild-access-early-irq.log",
     Expect(32, 32, 32, HOTPLUG), ("splat",)),
    ("debug32-rr-acpi-walk-rcu-self-stall.log", Expect(32, 32, 32, HOTPLUG),
     ("splat",)),
    ("rr128-acpi-scan-rcu-stall-preempt-none.log", Expect(128, 128, 128),
     ("splat",)),
    # the RCU grace-period kthread's timer lost on an idle vCPU (MTTCG)
    ("kasan16-mttcg-gp-kthread-timer-lost.log",
     Expect(16, 16, 16, HOTPLUG, "parallel"), ALL),
    ("kasan16-mttcg-serial-offline-timer-lost-cpu8.log",
     Expect(16, 16, 16, HOTPLUG, "serial"), ALL),
    # nosmt siblings and CPUs prepared by maxcpus= left above OFFLINE
    ("series-nosmt-offline-stale-at-95.log",
     Expect(8, 4, 4, ("cpus", "smt-on", "hotplug"), "parallel"),
     ("offline-stale",)),
    ("series-maxcpus4-prepared-left-at-90.log",
     Expect(8, 4, 4, mode="parallel"), ("offline-stale",)),
    # the TSC turned off, which only a tscwarp entry may excuse
    ("v2-fault-tscwarp-cpu6-8-single.log", Expect(8, 8, 8, HOTPLUG),
     ("splat",)),
    ("v2-fault-tscwarp-cpu6-8-single-serial.log", Expect(8, 8, 8, HOTPLUG),
     ("splat",)),
]


@pytest.mark.parametrize("log,want,fired", REAL,
                         ids=[f"{r[0]}-{'-'.join(r[2]) or 'pass'}"
                              for r in REAL])
def test_real_boots(log, want, fired):
    got = verdict(load(log), want)
    assert got.status == (judge.FAIL if fired else judge.PASS)
    assert rules(got) == fired, got.reasons


def test_counts_are_not_checked_with_cpus_offline():
    """With a core's two threads offline the guest counts a core fewer;
    only the CPU count fails such a boot (here 30 were expected)."""
    text = replace_first(load(TOPO), "online_count=32", "online_count=30")
    text = replace_first(text, "packages=2 cores=16", "packages=2 cores=15")
    assert verdict(text, replace(TOPO_WANT, online=30)).ok


def test_no_cpu_to_start_wants_the_none_mode_line():
    """nosmp or maxcpus=1 on a v3 kernel: "no secondary CPUs to bring
    up", whatever mode is configured. v2 logged "parallel bringup of 0
    CPUs" there, which now fails."""
    v2 = load("rr64-maxcpus1-post-bringup.log")
    v3 = v2.replace("smpboot: parallel bringup of 0 CPUs",
                    "cpuhp: no secondary CPUs to bring up")
    want = Expect(64, 1, 1, mode="none", topologies=((2, 32, 2),))
    assert verdict(v3, want).ok, verdict(v3, want).texts()
    got = verdict(v2, want)
    assert got.status == judge.FAIL
    assert "mode parallel, expected none" in got.texts()
    entry = next(e for e in soak.fixed()["cmdline"] if e.name == "nosmp")
    assert matrix.expect(entry, modes=True).mode == "none"


def test_nosmt_starts_the_siblings_so_the_mode_is_the_configured_one():
    """nosmt on one core of two threads: the kernel starts the sibling
    to park it ("parallel bringup of 1 CPUs"), one CPU online (make
    soak's m037, which the lab wrongly expected to say "no secondary
    CPUs")."""
    log = load("series-intel-2-1x1x2-nosmt-parallel.log")
    entry = matrix.Entry("m037-intel-2-1x1x2-n1-xapic-multi-nosmt",
                         MachineSpec(2, "1x1x2", tcg="multi", x2apic=False),
                         append="nosmt", expect_online=1)
    want = matrix.expect(entry, modes=True)
    assert want.mode == "parallel"
    assert verdict(log, want).ok, verdict(log, want).texts()
    for append in ("nosmp", "maxcpus=1", "maxcpus=0 nosmt", "nr_cpus=1"):
        assert matrix.expect(replace(entry, append=append),
                             modes=True).mode == "none"


def test_a_stuck_cpu_in_a_parallel_bringup_is_refused_its_kick():
    """stuckwait in a parallel bringup (make soak): CPU3 is STUCK before
    its turn to be waited for; the core refuses to start it again, the
    other seven come up, a later online of CPU3 fails."""
    log = load("v3-fault-stuckwait-cpu3-8-single-parallel.log")
    want = fault_want("stuckwait", 3)
    assert verdict(log, want).ok, verdict(log, want).texts()
    # without the refusal the CPU's failure is not named
    gone = log.replace("CPU3: not started, it may still run", "CPU3: x")
    assert "present" in rules(verdict(gone, want))
