"""`bringup judge LOG`: a kept console log judged again from the log
alone, as the run that wrote it judged it."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bringuplab.build import kernel
from bringuplab.guest import machine
from bringuplab.runs import matrix, soak
from bringuplab.runs import logexpect
from bringuplab.verdict.judge import Expect
from reallogs import LOGS, load, replace_first

BRINGUP = Path(__file__).resolve().parents[1] / "tools" / "bringup"
TOPO = "series-intel-32-2x8x2-topology-hotplug.log"

# A bzImage path with no build beside it (NR_CPUS unknown: 512)
BZ = kernel.of_image(Path("bzImage"))


def bringup(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BRINGUP), *args],
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize("mach", [
    machine.make(32, "2x8x2", 2),
    machine.make(1),
    machine.make(16, "2x4x2", 2, "amd", True, "multi"),
    machine.make(20, "5x17x2", 1, x2apic=True, high=10),
    machine.make(6, "1x3x2", 3, "amd"),
])
def test_the_machine_is_read_back_from_qemus_command_line(mach):
    argv = mach.qemu_argv(Path("bzImage"), Path("initrd"),
                          "console=ttyS0 lab.plan=cpus maxcpus=2")
    assert logexpect.machine_of(argv) == mach
    assert logexpect.kernel_params(argv) == ["console=ttyS0",
                                             "lab.plan=cpus", "maxcpus=2"]


def test_the_kernel_command_line_quoted_or_not():
    quoted = logexpect.qemu_argv(
        load("soak-kasan16-mttcg-serial-offline-silent-hang.log"))
    assert logexpect.kernel_params(quoted)[-3:] == [
        "lab.plan=cpus,hotplug", "no5lvl", "cpuhp.parallel=0"]
    plain = logexpect.qemu_argv(load("missing-cpus-maxcpus2.log"))
    assert logexpect.kernel_params(plain)[-2:] == ["lab.plan=cpus",
                                                   "maxcpus=2"]
    assert logexpect.kernel_params(["qemu-system-x86_64"]) == []


def test_a_log_without_qemus_command_line_is_refused():
    with pytest.raises(logexpect.LabError, match="not a console log"):
        logexpect.qemu_argv(load("lockdep-splat.log"))
    with pytest.raises(logexpect.LabError, match="no -smp"):
        logexpect.machine_of(["qemu-system-x86_64", "-m", "512M"])
    # the lab always names the topology; a log that does not is no lab's
    with pytest.raises(logexpect.LabError, match="does not name sockets"):
        logexpect.machine_of(["qemu-system-x86_64", "-smp", "4"])


@pytest.mark.parametrize("log,numa", [
    ("good-intel-1cpu.log", 1),      # no -numa: one node
    ("series-intel-32-2x8x2-topology-hotplug.log", 2)])
def test_the_nodes_are_the_numa_options(log, numa):
    mach = logexpect.machine_of(logexpect.qemu_argv(load(log)))
    assert mach.numa == numa


def test_the_rules_are_the_judge_parser_and_expectations(monkeypatch):
    """The files whose last commit dates today's rules."""
    asked = []
    monkeypatch.setattr(logexpect.record, "first_line",
                        lambda argv: asked.append(argv) or "")
    assert logexpect.rules_changed() is None
    files = [a for a in asked[0] if a.startswith("tools/")]
    assert files == [f"tools/bringuplab/{name}" for name in (
        "verdict/judge.py", "verdict/parse.py", "runs/logexpect.py",
        "runs/matrix.py", "runs/soak.py")]


EIGHT = machine.make(8, "2x2x2", 2)


@pytest.mark.parametrize("params,online,boot_cpus,parallel", [
    ([], 8, 8, True),
    (["lab.plan=online-all,cpus", "maxcpus=2"], 8, 2, True),
    (["lab.plan=cpus,online-all", "maxcpus=4"], 4, 4, True),
    (["maxcpus=8"], 8, 8, True),
    (["nr_cpus=4"], 4, 4, True),
    (["nosmp"], 1, 1, None),
    (["maxcpus=0"], 1, 1, None),
    (["maxcpus=1"], 1, 1, None),
    (["lab.plan=cpus,smt-on,hotplug", "nosmt"], 4, 4, True),
    (["lab.plan=smt-on,cpus", "nosmt"], 8, 8, True),
    (["cpuhp.parallel=0"], 8, 8, False),
    (["no_parallel_bringup"], 8, 8, False),
    (["cpuhp.parallel=xyz"], 8, 8, True),
    (["maxcpus=two", "smpboot_fault=melt"], 8, 8, True),
    (["lab.plan=cpus,online-fails", "smpboot_fault=nosipi:3", "lab.cpu=3"],
     7, 7, True),
])
def test_expectations_derived_from_the_kernel_command_line(
        params, online, boot_cpus, parallel):
    entry = logexpect.derived("boot", EIGHT, params)
    want = matrix.expect(entry, modes=True)
    assert (want.online, want.boot) == (online, boot_cpus)
    assert want.mode == {True: "parallel", False: "serial",
                         None: "none"}[parallel]
    assert want.topologies == ((2, 4, 2),)


def test_nosmt_keeps_every_cpu_on_the_amd_profile():
    amd = machine.make(8, "1x4x2", 1, "amd")
    entry = logexpect.derived("boot", amd, ["nosmt"])
    assert matrix.expect(entry, modes=False).online == 8


def test_a_fault_is_expected_from_its_parameter():
    entry = logexpect.derived("boot", EIGHT, [
        "lab.plan=cpus,hotplug", "smpboot_fault=tscwarp:3"])
    want = matrix.expect(entry, modes=True)
    fault = matrix.expect(matrix.fault("tscwarp", 3), modes=True)
    assert (want.present, want.absent, want.plan) == (
        fault.present, fault.absent, fault.plan)


def copy_as(tmp_path: Path, log: str, name: str) -> Path:
    path = tmp_path / name
    shutil.copy(LOGS / log, path)
    return path


def test_a_log_named_after_an_entry_is_judged_as_that_entry(tmp_path):
    """The soak's nosipi entry: found by its label, its machine and its
    command line."""
    path = copy_as(tmp_path, "v2-fault-nosipi-cpu3-8-single.log",
                   "fault-nosipi-cpu3-8-single-20261202-101010-1234.log")
    kept, res = logexpect.rejudge(path)
    entry = next(e for e in soak.fault_entries()
                 if e.name == "fault-nosipi-cpu3-8-single")
    assert kept.known and kept.entry.name == entry.name
    assert res.verdict == "pass", res.reasons
    # a rerun of the entry (soak --entry NAME --repeat N)
    path = copy_as(tmp_path, "v2-fault-nosipi-cpu3-8-single.log",
                   "fault-nosipi-cpu3-8-single#2-20261202-101010-1234.log")
    assert logexpect.rejudge(path)[0].entry.name == entry.name


def test_an_entry_name_with_another_command_line_is_derived(tmp_path):
    # the label of a check entry, but a boot of 32 vCPUs
    path = copy_as(tmp_path, TOPO, "intel-1-20261202-101010-1234.log")
    kept, res = logexpect.rejudge(path)
    assert not kept.known and kept.entry.name == "intel-1"
    assert kept.expect.vcpus == 32 and res.verdict == "pass"


def test_a_monitor_dump_beside_an_older_log_makes_it_a_hang(tmp_path):
    kept, res = logexpect.rejudge(
        LOGS / "rr170-alone-periodic-tick-livelock-in-bringup.log")
    assert res.verdict == "hang"
    assert res.rules == ["killed", "brought-up", "online"]
    assert kept.expect == Expect(170, 170, 170, ("cpus",), "parallel",
                                 topologies=((5, 85, 2),))
    # the same log without its dump: a fail
    path = copy_as(tmp_path, "rr170-alone-periodic-tick-livelock-in-bringup"
                   ".log", "rr170.log")
    assert logexpect.rejudge(path)[1].verdict == "fail"


SYSBOOT = "sysboot-ours-serial-20261206-233954-29343.log"


def test_a_debian_image_boot_is_judged_as_sysboot_judged_it(tmp_path):
    """The image's check prints no topology line: a sysboot log is
    judged without one, as the run did; the same log under another
    label wants it, and fails."""
    kept, res = logexpect.rejudge(LOGS / SYSBOOT)
    assert res.verdict == "pass", res.reasons
    assert kept.expect.plan == ("cpus", "selftest", "kexec")
    assert kept.expect.mode == "serial" and kept.expect.topologies == ()
    other = copy_as(tmp_path, SYSBOOT, "image-20261206-233954-1.log")
    assert logexpect.rejudge(other)[1].rules == ["topology"]


def test_judge_prints_the_verdict_and_exits_0_on_a_pass():
    proc = bringup("judge", str(LOGS / TOPO))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("pass: 32/32 CPUs online, mode parallel")
    assert "32 vCPUs, 32 brought up, 32 online, plan cpus,hotplug, " \
        "mode parallel" in lines[1]
    assert lines[2] == ("  rules: today's; when the log was written is "
                        "unknown (no time in its name)")
    assert len(lines) == 3


def test_judge_json():
    proc = bringup("judge", "--json", str(LOGS / "panic-no-init.log"))
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    assert out["verdict"] == "fail" and not out["known_entry"]
    assert [r["rule"] for r in out["reasons"]] == ["finished", "online",
                                                  "splat"]
    assert out["expect"]["online"] == 2
    assert out["facts"]["boots"] == 1 and "text" not in out["facts"]


def test_judge_exits_1_on_a_hang_and_names_the_rules():
    proc = bringup("judge", str(
        LOGS / "rr170-alone-periodic-tick-livelock-in-bringup.log"))
    assert proc.returncode == 1
    assert proc.stdout.startswith("hang: ")
    assert "  killed: timeout: QEMU killed (QEMU monitor state in " \
        in proc.stdout


def test_judge_prints_a_dash_for_what_a_boot_never_reached():
    proc = bringup("judge", str(LOGS / "hang-killed-early.log"))
    first = proc.stdout.splitlines()[0]
    assert ": -/8 CPUs online," in first and "bringup - ms" in first
    assert "None" not in proc.stdout


def test_judge_exits_3_on_a_machine_qemu_refused(tmp_path):
    log = tmp_path / "boot-20261202-101010-1234.log"
    log.write_text(load(TOPO).splitlines()[0] + "\nqemu-system-x86_64: "
                   "-smp 600: Invalid SMP CPUs 600\n")
    proc = bringup("judge", str(log))
    assert proc.returncode == 3
    assert proc.stdout.startswith("infra: ")
    assert "qemu: QEMU refused the machine" in proc.stdout


@pytest.mark.parametrize("args,message", [
    (["judge"], "the following arguments are required: log"),
    (["judge", "/nonexistent.log"], "no console log at /nonexistent.log"),
    (["judge", str(LOGS / "lockdep-splat.log")], "not a console log"),
])
def test_judge_usage_errors_exit_2(args, message):
    proc = bringup(*args)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_judge_reproduces_a_matrix_runs_verdicts(monkeypatch, tmp_path):
    """The demo matrix run on real boots, one of them edited to have run
    in the other mode: its kept logs judged again give its verdicts."""
    from bringuplab.guest import boot
    from bringuplab.verdict import result
    text = {"demo-32": load(TOPO),
            "demo-32-serial": replace_first(load(TOPO), "parallel bringup "
                                            "of", "serial bringup of")}
    edited = dict(text)
    edited["demo-32"] = replace_first(text["demo-32"], "online_count=32",
                                      "online_count=31")

    def fake_run(spec: boot.BootSpec, quiet: bool = False):
        # the log as boot.run writes it: QEMU's command line first
        log = tmp_path / f"{spec.label}-20261203-101010-4242.log"
        argv = spec.mach.qemu_argv(spec.kernel, spec.initrd, spec.cmdline())
        console = edited[spec.label].split("\n", 1)[1]
        log.write_text("# " + " ".join(argv) + "\n" + console)
        return result.of_log(log.read_text(), spec.expectations(), str(log))
    monkeypatch.setattr(boot, "run", fake_run)
    monkeypatch.setattr(boot, "kernel_nr_cpus", lambda kernel: 512)
    rows = matrix.run_entries(matrix.MATRICES["demo"], BZ,
                              None, True)
    assert [r.result.verdict for r in rows] == ["fail", "pass"]
    for row in rows:
        kept, res = logexpect.rejudge(Path(row.result.log))
        assert kept.known and kept.entry == row.entry
        assert (res.verdict, res.reasons) == (row.result.verdict,
                                              row.result.reasons)


def test_every_matrix_and_soak_entry_is_known():
    known = logexpect.known_entries()
    names = [e.name for todo in matrix.MATRICES.values() for e in todo]
    names += [e.name for todo in soak.fixed().values() for e in todo]
    names += [e.name for e in soak.fault_entries()]
    names += [e.name for f in soak.DEBUG_FLAVOURS
              for e in soak.debug_entries(f)]
    names += ["m-x2apic-ids-above-255-single"]
    assert set(names) <= set(known)
    assert known["nosmp"][0].expect_online == 1
    assert known["debug-32-multi-serial"][0].machine.cpus == 32


def test_the_verdict_says_how_the_log_was_judged(tmp_path):
    path = copy_as(tmp_path, "v2-fault-nosipi-cpu3-8-single.log",
                   "fault-nosipi-cpu3-8-single-20261202-101010-1234.log")
    text = logexpect.render(*logexpect.rejudge(path))
    assert "  judged as entry fault-nosipi-cpu3-8-single: 8 vCPUs" in text
    text = logexpect.render(*logexpect.rejudge(LOGS / TOPO))
    assert "  judged as a boot of series-intel-32-2x8x2-topology-hotplug:" \
        in text


def test_judge_says_whether_todays_rules_are_newer_than_the_log(
        tmp_path, monkeypatch):
    from datetime import datetime, timezone
    log = tmp_path / "hotplug-16-20261201-101500-123.log"
    log.write_text(load("series-intel-16-parallel.log"))
    assert logexpect.written(log) == datetime(2026, 12, 1, 10, 15,
                                              tzinfo=timezone.utc)
    later = datetime(2026, 12, 3, 9, 0, tzinfo=timezone.utc)
    assert "after the log was written (2026-12-01 10:15 UTC)" in \
        logexpect.rules_line(logexpect.written(log), later)
    earlier = datetime(2026, 11, 30, tzinfo=timezone.utc)
    assert "unchanged since the log was written" in \
        logexpect.rules_line(logexpect.written(log), earlier)
    assert "unknown (no git" in logexpect.rules_line(logexpect.written(log),
                                                      None)
    assert "unknown (no time" in logexpect.rules_line(None, later)
    monkeypatch.setattr(logexpect, "rules_changed", lambda: later)
    kept, res = logexpect.rejudge(log)
    assert "  rules: today's, changed 2026-12-03 09:00 UTC" in \
        logexpect.render(kept, res)


def test_a_parameter_given_twice_counts_as_the_kernel_reads_it_last():
    params = ["maxcpus=2", "nosmt", "maxcpus=4"]
    assert logexpect.param(params, "maxcpus") == "4"
    assert logexpect.param(params, "nr_cpus") is None


def test_nosmt_on_cores_without_threads_keeps_maxcpus():
    one_thread = machine.make(8, "2x4x1", 2)
    entry = logexpect.derived("boot", one_thread, ["maxcpus=2", "nosmt"])
    assert matrix.expect(entry, modes=True).online == 2


def test_judge_json_says_when_the_rules_changed(tmp_path, monkeypatch):
    from datetime import datetime, timezone
    log = tmp_path / "hotplug-16-20261201-101500-123.log"
    log.write_text(load("series-intel-16-parallel.log"))
    kept, res = logexpect.rejudge(log)
    when = datetime(2026, 12, 3, 9, 0, tzinfo=timezone.utc)
    monkeypatch.setattr(logexpect, "rules_changed", lambda: when)
    text = logexpect.to_json(kept, res)
    assert text.startswith('{\n "log": ')       # one space per level
    data = json.loads(text)
    assert data["rules_changed"] == "2026-12-03T09:00:00+00:00"
    assert data["written"] == "2026-12-01T10:15:00+00:00"
    monkeypatch.setattr(logexpect, "rules_changed", lambda: None)
    assert json.loads(logexpect.to_json(kept, res))["rules_changed"] is None
