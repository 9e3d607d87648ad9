"""The console-log parser against real logs from real boots
(tests/logs): the facts only; test_judge.py judges them."""
import gzip
import re

import pytest

from bringuplab.verdict import parse
from reallogs import LOGS, drop_line, insert_after, load, replace_first

TOPO_LOG = "series-intel-32-2x8x2-topology-hotplug.log"


def test_good_boot():
    facts = parse.parse(load("good-intel-xapic-4cpu.log"))
    assert (facts.cpus_online, facts.cpus_brought_up) == (4, 4)
    assert facts.online_each == [4] and facts.brought_up_each == [4]
    assert facts.bringup_start == pytest.approx(0.556569)
    assert facts.bringup_end == pytest.approx(0.620053)
    assert facts.bringup_ms == pytest.approx(63.484)
    assert facts.apic == "flat" and facts.mode is None and facts.done
    assert facts.boots == 1 and facts.splats == [] and facts.steps == {}
    assert facts.qemu_errors == [] and facts.killed == ""


def test_an_empty_log_has_no_facts():
    facts = parse.parse("")
    assert facts == parse.Facts()
    assert (facts.boots, facts.done, facts.cpus_online,
            facts.cpus_brought_up, facts.bringup_ms) == (0, False, None,
                                                         None, None)


def test_selftest_tap_hotplug_step_and_x2apic():
    facts = parse.parse(load("good-amd-x2apic-4cpu-selftest.log"))
    assert facts.apic == "cluster x2apic"
    assert (facts.tap.total, facts.tap.passed) == (1, 1)
    assert facts.steps == {"hotplug": "pass", "selftest": "done"}


def test_x2apic_set_up_by_firmware_is_reported_as_x2apic():
    # 170 vCPUs with APIC IDs up to 289: the firmware hands over in x2APIC
    # mode, and the kernel says "Setting", not "Switched", APIC routing.
    facts = parse.parse(load("soak-x2apic-170cpu-ids-above-255.log"))
    assert facts.apic == "cluster x2apic"
    assert facts.cpus_online == 170


def test_missing_cpus():
    facts = parse.parse(load("missing-cpus-maxcpus2.log"))
    assert facts.cpus_online == 2 and facts.cpus_brought_up == 2


def test_a_boot_killed_early():
    facts = parse.parse(load("hang-killed-early.log"))
    assert facts.boots == 1 and not facts.done
    assert facts.bringup_ms is None and facts.cpus_brought_up is None
    assert facts.killed == ""


def test_the_lab_marks_a_boot_it_killed():
    text = load("hang-killed-early.log") + parse.killed_line(
        "silent for 300 s; QEMU monitor state in x.monitor")
    facts = parse.parse(text)
    assert facts.killed == "silent for 300 s; QEMU monitor state in x.monitor"
    # on a line of its own, even after a partial console line
    assert parse.parse("[ 1.0] half a li" + parse.killed_line("why")
                       ).killed == "why"


def test_qemu_errors_but_not_its_warnings():
    header = load(TOPO_LOG).splitlines()[0]
    amd = load("base-amd-nosmt-all-online.log")
    assert "qemu-system-x86_64: warning:" in amd
    assert parse.parse(amd).qemu_errors == []
    refused = f"{header}\nqemu-system-x86_64: -smp 600: Invalid SMP CPUs\n"
    assert parse.parse(refused).qemu_errors == [
        "qemu-system-x86_64: -smp 600: Invalid SMP CPUs"]
    # only at the top of the log, where QEMU's own output is
    late = "\n".join([header] + ["[ 0.0] x"] * 5 +
                     ["qemu-system-x86_64: terminating on signal 15"])
    assert parse.parse(late).qemu_errors == []


def test_panic():
    facts = parse.parse(load("panic-no-init.log"))
    assert facts.splats and facts.splats[0].startswith("panic:")
    assert not facts.done and facts.online_each == []


def test_lockdep_splat():
    facts = parse.parse(load("lockdep-splat.log"))
    assert [s.split(":")[0] for s in facts.splats] == ["lockdep"]


@pytest.mark.parametrize("line,kind", [
    ("[    1.0] WARNING: CPU: 3 PID: 1 at kernel/cpu.c:123 foo+0x1", "WARN"),
    ("[    1.0] BUG: kernel NULL pointer dereference, address: 0", "BUG"),
    ("[    1.0] BUG: KASAN: slab-out-of-bounds in foo", "KASAN"),
    ("[    1.0] smpboot: do_boot_cpu failed(-1) to wakeup CPU#3",
     "boot-failed"),
    ("[    1.0] CPU3 failed to report alive state", "boot-failed"),
    ("[   30.0] watchdog: BUG: soft lockup - CPU#2 stuck for 22s!", "stuck"),
    ("[   30.0] rcu: INFO: rcu_sched detected stalls on CPUs/tasks:", "stuck"),
    ("[    1.0] tsc: Marking TSC unstable due to check_tsc_sync_all failed",
     "tsc-off"),
    ("[    1.0] tsc: Marking TSC unstable due to check_tsc_sync_source "
     "failed", "tsc-off"),
])
def test_splat_kinds(line, kind):
    assert parse.splats(line)[0].split(":")[0] == kind


def test_one_splat_per_line_and_every_line():
    text = ("[ 1.0] BUG: KASAN: wild-memory-access\n[ 2.0] nothing\n"
            "[ 3.0] Kernel panic - not syncing: x\n")
    assert [s.split(":")[0] for s in parse.splats(text)] == ["KASAN", "panic"]


def test_tsc_given_up_before_the_bringup_is_no_splat():
    """TCG profiles without a constant TSC (AMD's, and multi-socket ones)
    give the TSC up before any AP starts, and no sync test runs."""
    assert parse.splats(
        "[    0.4] tsc: Marking TSC unstable due to TSCs unsynchronized") == []


def test_series_mode_lines_parallel_and_serial():
    par = parse.parse(load("series-intel-16-parallel.log"))
    assert (par.mode, par.mode_reason) == ("parallel", None)
    assert (par.tap.total, par.tap.passed) == (2, 2)
    ser = parse.parse(load("series-intel-16-serial.log"))
    assert (ser.mode, ser.mode_reason) == \
        ("serial", "switched off on the command line")


def test_bringup_timing_phases_from_a_real_boot():
    facts = parse.parse(load("series-intel-16-timing.log"))
    assert list(facts.phases_us) == [
        "kick", "alive", "callin", "tsc-sync", "online", "ap-setup",
        "ap-calibrate", "ap-starting", "other"]
    assert facts.phases_us["tsc-sync"] == 31873
    assert facts.phases_us["other"] == 65380
    assert facts.kick_total_us == 152838


def test_bringup_timing_with_the_generic_waits():
    # The report after patch 31: the control CPU's waits in the generic
    # code get lines of their own, "other" keeps the rest.
    facts = parse.parse(load("series-rr64-parallel-timing-waits.log"))
    assert list(facts.phases_us) == [
        "kick", "alive", "callin", "tsc-sync", "online", "to-idle",
        "online-states", "ap-setup", "ap-calibrate", "ap-starting",
        "other"]
    assert facts.phases_us["online-states"] == 67337
    assert facts.phases_us["to-idle"] == 8958
    assert facts.kick_total_us == 237178


def test_bringup_timing_absent_and_kexec_keeps_first_report():
    facts = parse.parse(load("series-intel-16-parallel.log"))
    assert facts.phases_us == {} and facts.kick_total_us is None
    one = "[ 1.0] smpboot: bringup timing: kick   10 us\n"
    two = "[ 9.0] smpboot: bringup timing: kick   99 us\n"
    assert parse.phases(one + two) == {"kick": 10}


def test_tap_counts_skip_and_failure():
    tap = parse.tap("ok 1 a\nnot ok 2 b # exit=1\nok 3 c # SKIP\n")
    assert (tap.total, tap.passed, tap.failed, tap.skipped) == (3, 1, 1, 1)
    # a skip with its reason, in any case, is a skip; another directive
    # of a passing test is a pass
    tap = parse.tap("ok 1 a # SKIP no hotplug\nok 2 b # skip\n"
                    "ok 3 c # TODO later\n")
    assert (tap.total, tap.passed, tap.skipped) == (3, 1, 2)


def test_a_splat_keeps_160_characters_of_its_line():
    line = "[    1.000000] BUG: " + "x" * 300
    assert parse.splats(line) == ["BUG: " + line[:160]]


def test_the_excerpt_is_5_lines_before_the_first_splat_and_80_from_it():
    lines = [f"[    {i}.000000] line {i}" for i in range(200)]
    lines[100] = "[  100.000000] Kernel panic - not syncing: x"
    got = parse.excerpt("\n".join(lines)).splitlines()
    assert got == lines[95:180]
    # without a splat, the last 80 lines (or as many as asked)
    lines[100] = "[  100.000000] fine"
    assert parse.excerpt("\n".join(lines)).splitlines() == lines[120:]
    assert parse.excerpt("\n".join(lines), after=1) == lines[-1]
    assert parse.excerpt("\n".join(lines), after=0) == ""
    # a splat in the first lines: from the first line
    lines[2] = "[    2.000000] Kernel panic - not syncing: x"
    assert parse.excerpt("\n".join(lines)).splitlines() == lines[:82]


def test_single_cpu_boot_says_cpu_not_cpus():
    facts = parse.parse(load("good-intel-1cpu.log"))
    assert facts.cpus_brought_up == 1 and facts.cpus_online == 1


def test_kexec_chain_that_panics_in_the_second_kernel():
    facts = parse.parse(load("base-kexec-ir-timer-panic.log"))
    assert facts.boots == 3
    assert facts.brought_up_each == [8, 8]
    assert any(s.startswith("panic:") for s in facts.splats)
    assert "kexec" not in facts.steps


def test_each_kernel_of_a_chain_counts_its_cpus():
    text = load("good-intel-xapic-4cpu.log")
    two = text + "[    0.6] smp: Brought up 1 node, 3 CPUs\n" \
        "LAB: cpus online=0-2 present=0-3 online_count=3 present_count=4\n"
    facts = parse.parse(two)
    assert facts.brought_up_each == [4, 3] and facts.cpus_brought_up == 4
    assert facts.online_each == [4, 3] and facts.cpus_online == 3


def test_rcu_stall_after_every_cpu_online():
    """A soak boot (MTTCG 24 vCPUs) whose host was overcommitted: all CPUs
    came up, then stop_machine() stalled RCU."""
    facts = parse.parse(load("soak-mttcg24-rcu-stall-host-overcommit.log"))
    assert facts.cpus_online == 24 and facts.done
    assert any(s.startswith("stuck:") for s in facts.splats)


def test_guest_steps_and_their_topology_checks():
    facts = parse.parse(load(TOPO_LOG))
    assert facts.steps == {"hotplug": "pass"}
    assert facts.step_topology == {"hotplug": "ok"}
    assert facts.topology_each == [parse.Topology("ok", 2, 16, 2, 32)]
    text = replace_first(load(TOPO_LOG), "result=pass cpus=31 topology=ok",
                         "result=fail cpus=31 failures=2 "
                         "topology=cpu3:die_cpus")
    facts = parse.parse(text)
    assert facts.steps == {"hotplug": "fail"}
    assert facts.step_topology == {"hotplug": "cpu3:die_cpus"}


def test_a_step_without_a_result_line_in_a_real_log_is_done():
    facts = parse.parse(load("series-intel-16-parallel.log"))
    assert facts.steps == {"hotplug": "pass", "selftest": "done"}
    assert facts.step_topology == {}


def test_lab_lines_the_parser_ignores():
    text = insert_after(load(TOPO_LOG), "LAB: begin", "LAB: step\n"
                        "LAB: cpus online=0-31\nLAB: kexec left=2\n")
    facts = parse.parse(text)
    assert facts.steps == {"hotplug": "pass"} and facts.online_each == [32]


def test_no_done_line():
    facts = parse.parse(drop_line(load(TOPO_LOG), "LAB: done"))
    assert not facts.done


def test_nosmt_siblings_left_above_offline():
    # The 36 patches before cpuhp_bringup_rollback(): nosmt siblings,
    # cancelled at CPUHP_BRINGUP_CPU, stayed at the state where their
    # parallel start had left them (95).
    facts = parse.parse(load("series-nosmt-offline-stale-at-95.log"))
    assert facts.offline_stale == ["1:95", "3:95", "5:95", "7:95"]
    assert facts.steps["smt-on"] == "pass"
    text = load("series-nosmt-offline-stale-at-95.log").replace(
        "offline_stale=1:95,3:95,5:95,7:95", "offline_stale=")
    assert parse.parse(text).offline_stale == []


def test_prepared_cpus_left_offline_by_maxcpus():
    facts = parse.parse(load("series-maxcpus4-prepared-left-at-90.log"))
    assert facts.offline_stale == ["1:90", "3:90"]


def test_topology_facts_of_a_cpus_line_with_missing_counts():
    text = replace_first(load(TOPO_LOG), "topology=ok packages=2 cores=16 "
                         "threads=2\n", "topology=ok\n")
    assert parse.parse(text).topology_each == [
        parse.Topology("ok", 0, 0, 0, 32)]


def test_no_topology_on_an_older_cpus_line():
    facts = parse.parse(load("series-intel-16-parallel.log"))
    assert facts.topology_each == [] and facts.online_each == [16]


def test_post_bringup_is_the_guest_time_to_the_first_clocksource_switch():
    facts = parse.parse(load("fault-tschide-cpu6-8.log"))
    # to the microsecond, as printk gives it
    assert facts.post_bringup_ms == 3743.342
    # no "smp: Brought up": nothing to measure from
    assert parse.post_bringup("[ 1.0] clocksource: Switched to "
                              "clocksource tsc\n", None) is None
    # no switch after it: nothing to measure to
    end = parse.BRINGUP_END.search("[ 2.0] smp: Brought up 1 node, 2 CPUs\n")
    assert parse.post_bringup("[ 2.0] smp: Brought up 1 node, 2 CPUs\n",
                              end) is None


def test_idle_cpus_with_a_periodic_tick_slow_the_boot_cpu_under_rr_tcg():
    """The same 64-vCPU round-robin machine and initcalls, 2026-12-02:
    with maxcpus=1 the boot CPU ran them in 0.37 s of guest time; with
    63 APs online and idle, at HZ=250 before NOHZ can start, 21 s."""
    alone = parse.parse(load("rr64-maxcpus1-post-bringup.log"))
    crowd = parse.parse(load("rr64-tick-post-bringup-slow.log"))
    assert alone.cpus_brought_up == 1 and crowd.cpus_brought_up == 64
    assert alone.post_bringup_ms < 500
    assert crowd.post_bringup_ms > 40 * alone.post_bringup_ms


def test_the_periodic_tick_livelock_at_170_round_robin_vcpus():
    """Soak 2026-12-01 23:30, m-x2apic-ids-above-255 (170 vCPUs on one
    host thread): all CPUs up, then silent from the ACPI init on, before
    the clocksource switch that ends the periodic tick. The monitor
    dump taken when QEMU was killed has the local timer vector (236)
    pending in the IRR of all 170 CPUs, every local APIC timer
    periodic: each vCPU owed its next tick as soon as it had run the
    last one, so no CPU ran anything else."""
    text = load("soak-rr170-periodic-tick-livelock.log")
    facts = parse.parse(text)
    assert facts.cpus_brought_up == 170 and not facts.done
    assert facts.post_bringup_ms is None
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
    facts = parse.parse(
        load("rr170-alone-periodic-tick-livelock-in-bringup.log"))
    assert facts.bringup_start is not None and facts.cpus_brought_up is None
    dump = gzip.decompress(
        (LOGS / "rr170-alone-periodic-tick-livelock-in-bringup.monitor.gz")
        .read_bytes()).decode()
    lapics = dump.split("dumping local APIC state for CPU ")[1:]
    ticking = [lapic for lapic in lapics
               if re.search(r"^LVTT.*periodic", lapic, re.M)]
    assert len(lapics) == 170 and len(ticking) == 163
    assert all(re.search(r"^IRR\s+236\b", lapic, re.M) for lapic in ticking)


def test_the_periodic_tick_livelock_at_512_vcpus_at_100_hz():
    """The scale suite's 512-vCPU machine (2x128x2, one host thread) at
    100 Hz, 2026-12-07: the parallel bringup brought all 512 CPUs up,
    then the boot went silent in the ACPI init; the monitor dump taken
    when QEMU was killed at 1500 s has the local timer pending on all
    512, each local APIC timer periodic: the livelock at 170 vCPUs and
    250 Hz, moved up by the lower tick rate, not gone."""
    name = "scale-hz100-512-periodic-tick-livelock-20261207-055222-6990"
    records = LOGS.parent.parent / "records" / "logs"
    facts = parse.parse((records / f"{name}.log").read_text())
    assert facts.cpus_brought_up == 512 and not facts.done
    assert facts.post_bringup_ms is None
    dump = gzip.decompress(
        (records / f"{name}.monitor.gz").read_bytes()).decode()
    lapics = dump.split("dumping local APIC state for CPU ")[1:]
    assert len(lapics) == 512
    assert all(re.search(r"^IRR\s+236\b", lapic, re.M) for lapic in lapics)
    assert all(re.search(r"^LVTT.*periodic", lapic, re.M) for lapic in lapics)


def _lapics(records, name):
    dump = gzip.decompress(
        (records / f"{name}.monitor.gz").read_bytes()).decode()
    return dump.split("dumping local APIC state for CPU ")[1:]


def _ticks(records, name):
    """(local APICs, timer vector first pending, timer periodic) in the
    monitor dump of a kept boot."""
    lapics = _lapics(records, name)
    pending = sum(bool(re.search(r"^IRR\s+236\b", lapic, re.M))
                  for lapic in lapics)
    periodic = sum(bool(re.search(r"^LVTT.*periodic", lapic, re.M))
                   for lapic in lapics)
    return len(lapics), pending, periodic


def test_a_serial_256_vcpu_boot_at_100_hz_ticks_past_its_limit():
    """The scale suite's ours-serial boot at 256 vCPUs (2x64x2, one host
    thread, 100 Hz), 2026-12-07, twice. Booted alone: all 256 up, then
    killed at 1200 s in the PCI init before PID 1, every local APIC
    timer still periodic and the timer pending on most CPUs. In the
    suite's run, beside a build: past the clocksource switch (no timer
    periodic) and PID 1, killed while init ran; so the build did not
    make the first one slow."""
    records = LOGS.parent.parent / "records" / "logs"
    alone = ("scale-hz100-ours-serial-256-quiet-host-periodic-tick-"
             "20261207-170950-23311")
    facts = parse.parse((records / f"{alone}.log").read_text())
    assert facts.cpus_brought_up == 256 and not facts.done
    assert facts.post_bringup_ms is None
    assert _ticks(records, alone) == (256, 236, 256)
    beside = ("scale-hz100-ours-serial-256-deadline-beside-buildtest-"
              "20261207-161217-18900")
    text = (records / f"{beside}.log").read_text()
    assert parse.parse(text).cpus_brought_up == 256
    assert "Run /init as init process" in text
    lapics = _lapics(records, beside)
    assert len(lapics) == 256
    assert not any(re.search(r"^LVTT.*periodic", lapic, re.M)
                   for lapic in lapics)


def test_a_256_vcpu_serialwork_boot_ticks_in_its_bringup():
    """A serialwork boot (the TCG plugin counting every block) of v3 at
    256 vCPUs, scale-hz100 kernel, 2026-12-07, beside a kernel build:
    silent for 300 s in the second pass of the bringup (the SMT
    siblings of node 0 up, no "Brought up" line), every local APIC
    timer but nine periodic and the timer pending on 235 of 256 CPUs:
    the periodic-tick regime, in the bringup itself."""
    records = LOGS.parent.parent / "records" / "logs"
    name = ("serialwork-scale-hz100-256-periodic-tick-in-bringup-"
            "20261207-183537-20332")
    facts = parse.parse((records / f"{name}.log").read_text())
    assert facts.cpus_brought_up is None and not facts.done
    assert facts.killed.startswith("silent for 300 s")
    assert _ticks(records, name) == (256, 235, 247)


def test_three_kernels_at_256_vcpus_tick_past_the_suite_limit():
    """The scale suite's upstream 6.12 parallel boot at 256 vCPUs (SLUB
    kernels, 100 Hz, nothing else on the host), 2026-12-07: all 256 up,
    then killed at the suite's 20-minute limit in the MTRR setup before
    PID 1, every local APIC timer periodic and the timer pending on 221
    CPUs; in the earlier run of the suite the same kernel reached PID 1
    at 256. Base 6.1 serial, the first at 256 in the next run, the
    same; and ours parallel (v3 with every split-out series) in a run of
    its own. The regime, not one kernel, decides a boot at this size."""
    records = LOGS.parent.parent / "records" / "logs"
    for name, pending in (
            ("scale-hz100-upstream-parallel-256-slub-run-deadline-"
             "20261207-190344-29017", 221),
            ("scale-hz100-base-serial-256-slub-run-deadline-"
             "20261207-193541-25983", 233),
            ("scale-hz100-ours-parallel-256-slub-run-deadline-"
             "20261207-215012-917", 232)):
        text = (records / f"{name}.log").read_text()
        facts = parse.parse(text)
        assert facts.cpus_brought_up == 256 and not facts.done
        assert "Run /init as init process" not in text
        assert "deadline of 1200 s" in facts.killed
        assert _ticks(records, name) == (256, pending, 256)


def test_upstream_at_256_vcpus_under_the_plugin_ticks_past_its_limit():
    """serialwork's upstream 6.12 boot at 256 vCPUs (scale-hz100, SLUB,
    nothing else on the host), with no silence limit: every CPU kicked
    and listed, but no end of the bringup by the 1656 s limit (120 s +
    6 s per vCPU), 227 local APIC timers periodic, the timer pending on
    212: the periodic-tick regime, which the plugin's slower blocks
    deepen; so no upstream instruction count at 256."""
    records = LOGS.parent.parent / "records" / "logs"
    name = ("serialwork-scale-hz100-upstream-256-periodic-tick-deadline-"
            "20261207-210554-8607")
    text = (records / f"{name}.log").read_text()
    facts = parse.parse(text)
    assert facts.cpus_brought_up is None and not facts.done
    assert "deadline of 1656 s" in facts.killed
    listed = {int(n) for n in re.findall(r"#(\d+)", text)}
    assert listed >= set(range(1, 256))
    assert _ticks(records, name) == (256, 212, 227)


def test_ours_at_256_vcpus_under_the_plugin_ends_its_bringup():
    """Ours (v3 with every split-out series) in the same serialwork run as
    the upstream boot above: its 256 CPUs up at 141.7 s of guest time,
    past the end of the bringup (counted), ended by hand before PID 1."""
    records = LOGS.parent.parent / "records" / "logs"
    text = (records / "serialwork-scale-hz100-ours-256-ended-after-count-"
            "20261207-213332-8607.log").read_text()
    facts = parse.parse(text)
    assert facts.cpus_brought_up == 256 and not facts.done
    assert "[  141.650898] smp: Brought up 2 nodes, 256 CPUs" in text
    assert "Run /init as init process" not in text


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
    assert parse.excerpt(text, after=0) == ""


def test_timer_check_panic_before_any_ap():
    """make soak 2026-11-30 23:40, m230-amd-6-1x3x2-n3-x2apic-single, with
    a kernel build running beside the soak's two boots: check_timer()
    panicked at 0.048 s, before any AP was started."""
    facts = parse.parse(load("soak-amd6-timer-check-panic-starved-host.log"))
    assert facts.boots == 1 and facts.bringup_start is None
    assert any(s.startswith("panic:") for s in facts.splats)


def test_cpus_started_again_after_a_give_up():
    """Those x86 announced before the line and again after it, up to the
    end of the bringup; a continuation cut off by another message has a
    line of its own."""
    from bringuplab.verdict.parse import started_again
    log = load("v2-fault-rmstall-cpu1-8-multi.log")
    cpus, between = started_again(log, "CPU1 did not come up within")
    assert cpus == [1, 3, 5, 7]
    assert "CPU1: starting it again, alone" in between
    assert "Brought up" not in between
    assert started_again(log, "CPU9 did not come up") is None
    text = ("[ 1.0] .... node  #0, CPUs:   #1 #3\n"
            "[ 2.0] smpboot: CPU1 did not come up\n"
            "[ 2.1] .... node  #0, CPUs:   #1\n"
            "[ 3.0] smp: Brought up 1 node, 3 CPUs\n"
            "[ 9.0]  #3\n")
    cpus, between = started_again(text, "CPU1 did not")
    # CPU3's line after the bringup's end is not in it
    assert cpus == [1] and "#3" not in between and "#1" in between


def test_a_guest_line_cut_by_kernel_messages_is_made_whole():
    """The console writes a kernel message whole, into the middle of a
    line the guest is writing; the line's rest follows the messages."""
    log = load("series-lab-line-cut-twice-mttcg.log")
    cpus = ("LAB: cpus online=0-7 present=0-7 online_count=8 "
            "present_count=8 offline_stale= topology=ok packages=2 "
            "cores=4 threads=2\n")
    assert cpus not in log
    whole = parse.unsplice(log)
    assert cpus in whole
    refined = "[    1.894891] tsc: Refined TSC clocksource calibration"
    assert whole.index(refined) < whole.index(cpus)
    assert parse.parse(log).topology_each[0].check == "ok"
    # rest of it after a kernel message of its own line
    log = load("series-lab-line-cut-by-tsc-refine.log")
    assert ("offline_stale= topology=ok packages=1 cores=2 threads=2\n"
            in parse.unsplice(log))
    # a line cut and never finished (QEMU killed) is kept, at the end;
    # kernel messages and whole guest lines stay as they are
    text = ("[    1.000000] a\nLAB: x\nLAB: y[    2.000000] b\n"
            "[    3.000000] c\n")
    assert parse.unsplice(text) == ("[    1.000000] a\nLAB: x\n"
                                    "[    2.000000] b\n[    3.000000] c\n"
                                    "LAB: y")
    assert parse.unsplice(text + "z\n").endswith("c\nLAB: yz\n")


def test_the_bringup_window_is_exact_to_the_microsecond():
    text = ("[    1.234567] smp: Bringing up secondary CPUs ...\n"
            "[    1.470000] smp: Brought up 1 node, 8 CPUs\n")
    assert parse.parse(text).bringup_ms == 235.433


def test_a_step_line_without_a_result_is_done():
    facts = parse.parse("LAB: step hotplug\nLAB: step kexec result=pass\n")
    assert facts.steps == {"hotplug": "done", "kexec": "pass"}


def test_a_lab_field_may_hold_an_equals_sign():
    assert parse.lab_fields("cpus a=1 cmd=x=y") == {"a": "1", "cmd": "x=y"}


def test_the_apic_mode_is_the_first_kernels():
    """The machine's mode is its first kernel's, as its bringup mode is:
    a kexec chain to nox2apic, its second kernel given a routing line."""
    text = load("series-kexec-x2apic-to-nox2apic.log")
    first, rest = text.split("LAB: begin", 1)
    rest = rest.replace("smpboot: parallel bringup", "Switched APIC routing "
                        "to physical flat.\n[    0.2] smpboot: parallel "
                        "bringup", 1)
    facts = parse.parse(first + "LAB: begin" + rest)
    assert parse.APIC_MODE.findall(first + rest) == ["cluster x2apic",
                                                     "physical flat"]
    assert facts.apic == "cluster x2apic"
    assert parse.parse("nothing").apic == "flat"
