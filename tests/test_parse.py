"""The console-log parser against real logs from real boots (tests/logs)."""
import gzip
import re
from pathlib import Path
from typing import List

import pytest

from bringuplab import parse

LOGS = Path(__file__).resolve().parent / "logs"


def load(name: str) -> str:
    return (LOGS / name).read_text()


def test_good_boot():
    res = parse.parse(load("good-intel-xapic-4cpu.log"), 4)
    assert res.verdict == "pass", res.reasons
    assert (res.cpus_online, res.cpus_brought_up) == (4, 4)
    assert res.bringup_start == pytest.approx(0.556569)
    assert res.bringup_ms == pytest.approx(63.484)
    assert res.apic == "flat" and res.mode is None and res.done


def test_good_boot_with_selftest_tap_and_x2apic():
    res = parse.parse(load("good-amd-x2apic-4cpu-selftest.log"), 4,
                      plan=["cpus", "hotplug", "selftest"])
    assert res.verdict == "pass", res.reasons
    assert res.apic == "cluster x2apic"
    assert (res.tap.total, res.tap.passed) == (1, 1)
    assert res.steps["hotplug"] == "pass"


def test_x2apic_set_up_by_firmware_is_reported_as_x2apic():
    # 170 vCPUs with APIC IDs up to 289: the firmware hands over in x2APIC
    # mode, and the kernel says "Setting", not "Switched", APIC routing.
    res = parse.parse(load("soak-x2apic-170cpu-ids-above-255.log"), 170)
    assert res.verdict == "pass", res.reasons
    assert res.apic == "cluster x2apic"


def test_same_log_fails_when_more_cpus_expected():
    res = parse.parse(load("good-intel-xapic-4cpu.log"), 8)
    assert res.verdict == "fail"
    assert "kernel 1: brought up 4 of 8 CPUs" in res.reasons


def test_missing_cpus():
    res = parse.parse(load("missing-cpus-maxcpus2.log"), 4)
    assert res.verdict == "fail"
    assert res.cpus_online == 2 and res.cpus_brought_up == 2


def test_hang():
    res = parse.parse(load("hang-killed-early.log"), 8, timed_out=True)
    assert res.verdict == "hang"
    assert res.bringup_ms is None and not res.done


def test_hang_is_judged_by_timeout_not_by_content():
    # The same truncated log without a timeout is an early exit: fail.
    res = parse.parse(load("hang-killed-early.log"), 8)
    assert res.verdict == "fail"
    assert any("did not finish" in r for r in res.reasons)


def test_panic():
    res = parse.parse(load("panic-no-init.log"), 2)
    assert res.verdict == "fail"
    assert res.splats and res.splats[0].startswith("panic:")


def test_lockdep_splat_fails_an_otherwise_good_boot():
    res = parse.parse(load("lockdep-splat.log"), 4)
    assert res.verdict == "fail"
    assert [s.split(":")[0] for s in res.splats] == ["lockdep"]


def test_selftest_requested_but_absent_fails():
    res = parse.parse(load("good-intel-xapic-4cpu.log"), 4,
                      plan=["cpus", "selftest"])
    assert res.verdict == "fail"
    assert "selftest: no TAP results" in res.reasons


@pytest.mark.parametrize("line,kind", [
    ("[    1.0] WARNING: CPU: 3 PID: 1 at kernel/cpu.c:123 foo+0x1", "WARN"),
    ("[    1.0] BUG: kernel NULL pointer dereference, address: 0", "BUG"),
    ("[    1.0] BUG: KASAN: slab-out-of-bounds in foo", "KASAN"),
    ("[    1.0] smpboot: do_boot_cpu failed(-1) to wakeup CPU#3", "boot-failed"),
    ("[    1.0] CPU3 failed to report alive state", "boot-failed"),
    ("[   30.0] watchdog: BUG: soft lockup - CPU#2 stuck for 22s!", "BUG"),
    ("[   30.0] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:", "stuck"),
    ("[    1.0] tsc: Marking TSC unstable due to check_tsc_sync_all failed",
     "tsc-off"),
    ("[    1.0] tsc: Marking TSC unstable due to check_tsc_sync_source "
     "failed", "tsc-off"),
])
def test_splat_kinds(line, kind):
    assert parse.splats(line)[0].split(":")[0] == kind


def test_tsc_given_up_before_the_bringup_is_no_splat():
    """TCG profiles without a constant TSC (AMD's, and multi-socket ones)
    give the TSC up before any AP starts, and no sync test runs."""
    assert parse.splats(
        "[    0.4] tsc: Marking TSC unstable due to TSCs unsynchronized") == []


def test_series_mode_lines_parallel_and_serial():
    par = parse.parse(load("series-intel-16-parallel.log"), 16,
                      plan=["cpus", "hotplug", "selftest"])
    assert par.verdict == "pass", par.reasons
    assert (par.mode, par.mode_reason) == ("parallel", None)
    assert (par.tap.total, par.tap.passed) == (2, 2)
    ser = parse.parse(load("series-intel-16-serial.log"), 16,
                      plan=["cpus", "hotplug", "selftest"])
    assert ser.verdict == "pass", ser.reasons
    assert (ser.mode, ser.mode_reason) == \
        ("serial", "switched off on the command line")


def test_bringup_timing_phases_from_a_real_boot():
    res = parse.parse(load("series-intel-16-timing.log"), 16)
    assert res.verdict == "pass", res.reasons
    assert list(res.phases_us) == [
        "kick", "alive", "callin", "tsc-sync", "online", "ap-setup",
        "ap-calibrate", "ap-starting", "other"]
    assert res.phases_us["tsc-sync"] == 31873
    assert res.phases_us["other"] == 65380
    assert res.kick_total_us == 152838


def test_bringup_timing_with_the_generic_waits():
    # The report after patch 31: the control CPU's waits in the generic
    # code get lines of their own, "other" keeps the rest.
    res = parse.parse(load("series-rr64-parallel-timing-waits.log"), 64)
    assert res.verdict == "pass", res.reasons
    assert list(res.phases_us) == [
        "kick", "alive", "callin", "tsc-sync", "online", "to-idle",
        "online-states", "ap-setup", "ap-calibrate", "ap-starting",
        "other"]
    assert res.phases_us["online-states"] == 67337
    assert res.phases_us["to-idle"] == 8958
    assert res.kick_total_us == 237178


def test_bringup_timing_absent_and_kexec_keeps_first_report():
    assert parse.parse(load("series-intel-16-parallel.log"), 16).phases_us \
        == {}
    one = "[ 1.0] smpboot: bringup timing: kick   10 us\n"
    two = "[ 9.0] smpboot: bringup timing: kick   99 us\n"
    assert parse.phases(one + two) == {"kick": 10}


def test_tap_counts_skip_and_failure():
    tap = parse.tap("ok 1 a\nnot ok 2 b # exit=1\nok 3 c # SKIP\n")
    assert (tap.total, tap.passed, tap.failed, tap.skipped) == (3, 1, 1, 1)


def test_single_cpu_boot_says_cpu_not_cpus():
    res = parse.parse(load("good-intel-1cpu.log"), 1)
    assert res.verdict == "pass", res.reasons
    assert res.cpus_brought_up == 1


def test_kexec_chain_that_panics_in_the_second_kernel():
    res = parse.parse(load("base-kexec-ir-timer-panic.log"), 8,
                      plan=["cpus", "kexec"])
    assert res.verdict == "fail" and res.boots == 3
    assert any(s.startswith("panic:") for s in res.splats)
    assert "step kexec: missing" in res.reasons


def test_rcu_stall_fails_a_boot_even_with_every_cpu_online():
    """A soak boot (MTTCG 24 vCPUs) whose host was overcommitted: all CPUs
    came up, then stop_machine() stalled RCU. The verdict must be fail."""
    from pathlib import Path
    from bringuplab import parse
    log = (Path(__file__).parent / "logs" /
           "soak-mttcg24-rcu-stall-host-overcommit.log").read_text()
    res = parse.parse(log, 24)
    assert res.cpus_online == 24
    assert res.verdict == "fail"
    assert any(s.startswith("stuck:") for s in res.splats)


# Soak boots with every CPU up and the hotplug step passed, failed by a
# splat after the bringup:
# - make soak 2026-11-30 06:29, debug-32-multi-serial (lockdep, 32 vCPUs
#   MTTCG, cpuhp.parallel=0): onlining CPU 30 and offlining CPU 31 took
#   55 s with an RCU stall on the way;
# - soak --only debug 2026-11-30 10:32, kasan-32-single: KASAN's false
#   "wild-memory-access" of the unpatched 6.1 kernel under 5-level paging
#   (an interrupt while identify_cpu() has cleared x86_capability);
# - soak --only debug 2026-11-30 10:44, debug-32-single-serial (lockdep,
#   32 vCPUs round-robin): CPU 17 spent over 26 s of guest time in the
#   ACPI namespace walk of acpi_init(), an RCU self-detected stall;
# - make soak 2026-11-30 12:20, m138 (128 vCPUs round-robin, serial, the
#   PREEMPT_NONE guest kernel): PID 1 ran the ACPI bus scan for 84 s
#   without a quiescent state (see docs/decisions.md, preemption).
# A passed step must not hide the splat.
@pytest.mark.parametrize("log,cpus,plan,splat", [
    ("soak-debug32-mttcg-rcu-stall-hotplug.log", 32, ["cpus", "hotplug"],
     "stuck:"),
    ("kasan-la57-false-wild-access-early-irq.log", 32, ["cpus", "hotplug"],
     "KASAN"),
    ("debug32-rr-acpi-walk-rcu-self-stall.log", 32, ["cpus", "hotplug"],
     "stuck:"),
    ("rr128-acpi-scan-rcu-stall-preempt-none.log", 128, ["cpus"], "stuck:")])
def test_splat_after_bringup_fails_a_boot_with_every_cpu_online(
        log: str, cpus: int, plan: List[str], splat: str) -> None:
    res = parse.parse(load(log), cpus, plan=plan)
    assert res.cpus_online == cpus
    assert all(res.steps.get(step) == "pass" for step in plan)
    assert res.verdict == "fail"
    assert any(s.startswith(splat) for s in res.splats)


def test_lost_timer_wakeup_of_an_idle_vcpu_fails_the_boot():
    """CI 2026-11-30 13:58, kasan-16-multi: every CPU up, then the RCU
    grace-period kthread's timer on idle CPU 14 did not fire for 21 s
    (all CPUs idle, MTTCG); the stall panics before the hotplug step
    ends. Seen once before on the guest kernel (MTTCG, 32 vCPUs)."""
    res = parse.parse(load("kasan16-mttcg-gp-kthread-timer-lost.log"), 16,
                      plan=["cpus", "hotplug"])
    assert res.cpus_online == 16 and res.steps.get("cpus") == "pass"
    assert res.verdict == "fail"
    assert "step hotplug: missing" in res.reasons
    assert any(s.startswith("stuck:") for s in res.splats)


def test_silent_hang_in_a_cpu_offline_is_a_hang():
    """Soak 2026-12-01 03:03, kasan-16-multi-serial: the hotplug step
    offlined and onlined CPUs 1, 10 and 11, then the offline of CPU 12
    never ended; no line, no RCU stall report, QEMU nearly idle for the
    30 minutes until the soak's timeout."""
    text = load("soak-kasan16-mttcg-serial-offline-silent-hang.log")
    res = parse.parse(text, 16, plan=["cpus", "hotplug"], timed_out=True)
    assert res.verdict == "hang"
    assert res.cpus_online == 16 and res.steps.get("cpus") == "pass"
    assert not res.splats and not res.done


def test_lost_timer_in_a_serial_mode_offline_fails_the_boot():
    """One of 169 reruns of that soak boot (2026-12-01 03:46-04:31):
    the offline of CPU 10 stalled, and RCU reported that its kthread's
    timer on idle CPU 8, never hotplugged, had not fired for 21 s."""
    text = load("kasan16-mttcg-serial-offline-timer-lost-cpu8.log")
    res = parse.parse(text, 16, plan=["cpus", "hotplug"])
    assert res.cpus_online == 16 and res.steps.get("cpus") == "pass"
    assert res.verdict == "fail"
    assert "step hotplug: missing" in res.reasons
    assert any(s.startswith("stuck:") for s in res.splats)


def test_lost_timer_after_a_stopped_ap_fails_the_boot():
    """Soak 2026-12-01 23:55, fault-postalive-cpu1-16-multi (lockdep
    kernel, MTTCG): CPU 1 stopped as injected, the 15 others up, /init
    started; then the RCU grace-period kthread's timer on idle CPU 6
    did not fire for 26 s, every CPU idle: the signature of the two
    logs above. 5 reruns of the same entry passed."""
    res = parse.parse(load("fault-postalive-mttcg16-gp-kthread-timer-lost.log"),
                      16, plan=["cpus", "online-fails"])
    assert res.verdict == "fail"
    assert "step online-fails: missing" in res.reasons
    assert any(s.startswith("stuck:") and "rcu_preempt detected stalls" in s
               for s in res.splats)


def test_periodic_tick_livelock_at_170_round_robin_vcpus_is_a_hang():
    """Soak 2026-12-01 23:30, m-x2apic-ids-above-255 (170 vCPUs on one
    host thread): all CPUs up, then silent from the ACPI init on, before
    the clocksource switch that ends the periodic tick. The monitor
    dump taken when QEMU was killed has the local timer vector (236)
    pending in the IRR of all 170 CPUs, every local APIC timer
    periodic: each vCPU owed its next tick as soon as it had run the
    last one, so no CPU ran anything else."""
    res = parse.parse(load("soak-rr170-periodic-tick-livelock.log"), 170,
                      plan=["cpus"], timed_out=True)
    assert res.verdict == "hang" and not res.done
    text = load("soak-rr170-periodic-tick-livelock.log")
    assert "smp: Brought up 1 node, 170 CPUs" in text
    assert "clocksource: Switched to" not in text
    dump = gzip.decompress(
        (LOGS / "soak-rr170-periodic-tick-livelock.monitor.gz").read_bytes()
    ).decode()
    lapics = dump.split("dumping local APIC state for CPU ")[1:]
    assert len(lapics) == 170
    assert all(re.search(r"^IRR\s+236\b", lapic, re.M) for lapic in lapics)
    assert all(re.search(r"^LVTT.*periodic", lapic, re.M) for lapic in lapics)


def test_the_same_livelock_in_the_bringup_when_booted_alone():
    """The same machine booted alone right after (2026-12-02 00:06):
    silent from 10.6 s on, in the bringup, once 163 CPUs ran their tick;
    the local timer was pending on each of those 163, periodic; of the
    7 others, 6 not yet started sat halted in the BIOS and one, started,
    waited for its release (smpboot_wait_for_release)."""
    res = parse.parse(load("rr170-alone-periodic-tick-livelock-in-bringup.log"),
                      170, plan=["cpus"], timed_out=True)
    assert res.verdict == "hang" and not res.done
    dump = gzip.decompress(
        (LOGS / "rr170-alone-periodic-tick-livelock-in-bringup.monitor.gz")
        .read_bytes()).decode()
    lapics = dump.split("dumping local APIC state for CPU ")[1:]
    ticking = [lapic for lapic in lapics
               if re.search(r"^LVTT.*periodic", lapic, re.M)]
    assert len(lapics) == 170 and len(ticking) == 163
    assert all(re.search(r"^IRR\s+236\b", lapic, re.M) for lapic in ticking)


def test_excerpt_starts_at_the_first_splat():
    text = load("kasan16-mttcg-gp-kthread-timer-lost.log")
    out = parse.excerpt(text, after=10, before=2).splitlines()
    assert len(out) == 12
    assert any(pat.search(out[2]) for _, pat in parse.SPLATS)
    assert not any(pat.search(line) for line in out[:2]
                   for _, pat in parse.SPLATS)


def test_excerpt_of_a_log_without_splat_is_its_end():
    text = load("good-intel-xapic-4cpu.log")
    assert parse.excerpt(text, after=3) == \
        "\n".join(text.splitlines()[-3:])


def test_timer_check_panic_before_any_ap_fails_the_boot():
    """make soak 2026-11-30 23:40, m230-amd-6-1x3x2-n3-x2apic-single, with
    a kernel build running beside the soak's two boots: check_timer()
    panicked at 0.048 s, before any AP was started. A fail, not a pass
    and not a hang, with the panic named."""
    res = parse.parse(load("soak-amd6-timer-check-panic-starved-host.log"),
                      6)
    assert res.verdict == "fail"
    assert any(s.startswith("panic:") for s in res.splats)


def test_nosmt_siblings_left_above_offline_fail_the_boot():
    # The 36 patches before cpuhp_bringup_rollback(): nosmt siblings,
    # cancelled at CPUHP_BRINGUP_CPU, stayed at the state where their
    # parallel start had left them (95) although everything else about
    # the boot, SMT switched on later included, looks fine.
    res = parse.parse(load("series-nosmt-offline-stale-at-95.log"), 4,
                      plan=["cpus", "smt-on", "hotplug"])
    assert res.verdict == "fail"
    assert res.offline_stale == ["1:95", "3:95", "5:95", "7:95"]
    assert res.reasons == ["sysfs: offline CPUs not at CPUHP_OFFLINE "
                           "(cpu:state): 1:95,3:95,5:95,7:95"]
    assert res.steps["smt-on"] == "pass"


def test_offline_cpus_at_state_0_pass():
    text = load("series-nosmt-offline-stale-at-95.log").replace(
        "offline_stale=1:95,3:95,5:95,7:95", "offline_stale=")
    res = parse.parse(text, 4, plan=["cpus", "smt-on", "hotplug"])
    assert res.verdict == "pass", res.reasons
    assert res.offline_stale == []


def test_prepared_cpus_left_offline_by_maxcpus_fail_the_boot():
    # Before the PREPARE states followed the order of the bringup rounds:
    # with maxcpus=4 on 2x2x2, CPUs 1-3 were prepared, while the primary
    # threads 2, 4, 6 were brought up; 1 and 3 stayed prepared (90).
    res = parse.parse(load("series-maxcpus4-prepared-left-at-90.log"), 4)
    assert res.verdict == "fail"
    assert res.offline_stale == ["1:90", "3:90"]
    assert len(res.reasons) == 1 and "1:90,3:90" in res.reasons[0]


TOPO_LOG = "series-intel-32-2x8x2-topology-hotplug.log"
TOPO_LINE = "topology=ok packages=2 cores=16 threads=2"
INTEL_2X8X2 = parse.Expected(32, ((2, 16, 2),))


def test_topology_of_a_real_boot_passes_against_its_machine():
    """32 vCPUs 2x8x2 brought up in parallel, then every CPU off and on:
    the masks agree with the IDs, and the guest counts the machine."""
    res = parse.parse(load(TOPO_LOG), 32, plan=["cpus", "hotplug"],
                      machine=INTEL_2X8X2)
    assert res.verdict == "pass", res.reasons
    assert res.topology_each == [parse.Topology("ok", 2, 16, 2, 32)]


@pytest.mark.parametrize("bad,why", [
    ("topology=cpu5:thread_siblings packages=2 cores=16 threads=2",
     "cpu5:thread_siblings does not match"),
    ("topology=ok packages=1 cores=16 threads=2", "machine (2, 16, 2)"),
    ("topology=ok packages=2 cores=32 threads=1", "machine (2, 16, 2)"),
    ("", "no topology check"),
])
def test_topology_wrong_or_missing_fails(bad, why):
    text = load(TOPO_LOG).replace(TOPO_LINE, bad, 1)
    res = parse.parse(text, 32, plan=["cpus", "hotplug"],
                      machine=INTEL_2X8X2)
    assert res.verdict == "fail"
    assert any(why in r for r in res.reasons), res.reasons


def test_topology_counts_unchecked_with_cpus_offline():
    """With a CPU offline the guest counts fewer threads; only the masks
    are checked (the CPU count fails the boot on its own)."""
    text = load(TOPO_LOG).replace("online_count=32", "online_count=31")
    res = parse.parse(text, 31, plan=["cpus"], machine=INTEL_2X8X2)
    assert not any("topology" in r for r in res.reasons), res.reasons


def test_topology_unchecked_without_a_machine():
    """A log read without its machine (states_report, old test logs)."""
    res = parse.parse(load("series-intel-16-parallel.log"), 16)
    assert res.topology_each == [] and res.verdict == "pass"


def test_post_bringup_is_the_guest_time_to_the_first_clocksource_switch():
    res = parse.parse(load("fault-tschide-cpu6-8.log"), 8)
    assert res.post_bringup_ms == pytest.approx(5272.542 - 1529.200)
    # no "smp: Brought up": nothing to measure from
    assert parse.post_bringup("[ 1.0] clocksource: Switched to "
                              "clocksource tsc\n", None) is None


def test_idle_cpus_with_a_periodic_tick_slow_the_boot_cpu_under_rr_tcg():
    """The same 64-vCPU round-robin machine and initcalls, 2026-12-02:
    with maxcpus=1 the boot CPU ran them in 0.37 s of guest time; with
    63 APs online and idle, at HZ=250 before NOHZ can start, 21 s."""
    alone = parse.parse(load("rr64-maxcpus1-post-bringup.log"), 64)
    crowd = parse.parse(load("rr64-tick-post-bringup-slow.log"), 64)
    assert alone.cpus_brought_up == 1 and crowd.cpus_brought_up == 64
    assert crowd.verdict == "pass", crowd.reasons
    assert alone.post_bringup_ms < 500
    assert crowd.post_bringup_ms > 40 * alone.post_bringup_ms
