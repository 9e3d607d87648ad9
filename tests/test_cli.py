"""Bad input gets one clear line and exit 2, never a traceback."""
import subprocess
import sys
from pathlib import Path

import pytest

from bringuplab.build import kernel
from bringuplab.guest.machinespec import MachineSpec

BRINGUP = Path(__file__).resolve().parents[1] / "tools" / "bringup"

# A bzImage path with no build beside it (NR_CPUS unknown: 512)
BZ = kernel.of_image(Path("bzImage"))


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BRINGUP), *args],
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize("args,message", [
    (["boot", "--profile", "sparc"],
     "argument --profile: invalid choice: 'sparc'"),
    (["boot", "--cpus", "3", "--topology", "2x2x1"], "not --cpus 3"),
    (["boot", "--cpus", "4100"], "at most 4096"),
    (["boot", "--cpus", "600"], "but the kernel has NR_CPUS="),
    (["boot", "--tcg", "fast"], "argument --tcg: invalid choice: 'fast'"),
    (["boot", "--topology", "2x2"], "is not SOCKETSxCORESxTHREADS"),
    (["boot", "--cpus", "8", "--topology", "1x4x2", "--numa", "3"],
     "--numa 3 does not divide the 4 cores evenly"),
    (["boot", "--cpus", "4", "--topology", "1x2x2", "--high", "2",
      "--numa", "2"], "--high needs --numa 1"),
    (["boot", "--cpus", "288", "--topology", "2x72x2", "--no-x2apic"],
     "needs --x2apic"),
    (["boot", "--x2apic", "--no-x2apic"], "not allowed with argument"),
    # compare and states take the same machine options (machinespec)
    (["compare", "--cpus", "8"], "topology 2x16x2 is 64 CPUs, not --cpus 8"),
    (["states", "--profile", "arm"], "invalid choice: 'arm'"),
    (["states", "--cpus", "32", "--topology", "2x8x2", "--numa", "5"],
     "--numa 5: between 1 and min(4, cpus)"),
    (["states", "--reps", "0"], "--reps must be at least 1"),
    (["bench", "--reps", "-1"], "--reps must be at least 1"),
    (["compare", "--reps", "x"], "argument --reps: invalid int value"),
    (["boot", "--plan", "cpus,dance"], "unknown plan step 'dance'"),
    (["boot", "--cpus", "many"], "invalid int value"),
    # TCG is the only accelerator (docs/decisions.md): no --accel
    (["boot", "--accel", "kvm"], "unrecognized arguments: --accel kvm"),
    (["matrix", "nosuch"], "unknown matrix 'nosuch'"),
    (["kernel", "--config", "huge"], "unknown config 'huge'"),
    (["compare", "--without", "x"], "not a patch number"),
    (["compare", "--without", "999"], "the series has patches 1-"),
    (["compare", "--reps", "0"], "--reps must be at least 1"),
    (["compare", "--config", "huge"], "unknown config 'huge'"),
    (["compare", "--config", "nosmp"], "compile-only"),
    (["compare", "--config", "hz100", "--config", "hz100"],
     "the same flavour twice"),
    (["kernel", "--to", "3"], "--from, --to and --boot need --each"),
    (["kernel", "--each", "--from", "5", "--to", "4"],
     "--to 4: before --from 5"),
    (["bench", "--suite", "huge"], "invalid choice: 'huge'"),
    (["bench", "--variants", "ours-parallel,fast"], "unknown variant 'fast'"),
    (["bench", "--variants", ","], "--variants names no variant"),
    (["frobnicate"], "invalid choice"),
    (["deb", "--config", "rt"], "argument --config: invalid choice: 'rt'"),
    (["deb", "--jobs", "0"], "--jobs must be at least 1"),
    (["sysboot", "ours", "--compare", "debian-cloud", "--plan", "cpus"],
     "--serial and --plan are for a check boot, not --compare"),
    (["sysboot", "ours", "--compare", "debian-cloud", "--serial"],
     "--serial and --plan are for a check boot, not --compare"),
])
def test_one_line_error(args, message):
    proc = run(*args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr


def want(entry, topology: bool = False):
    """An entry's expectations (mode unchecked, as without a series);
    the topology only for logs from after the guest checked it."""
    from dataclasses import replace
    from bringuplab.runs import matrix
    out = matrix.expect(entry, modes=False)
    return out if topology else replace(out, topologies=())


def judged(entry, text: str, topology: bool = False):
    from bringuplab.verdict import judge, parse
    return judge.judge(parse.parse(text), want(entry, topology))


def missing(entry, text: str):
    """The entry's wanted lines the log lacks (judge's present rule)."""
    from bringuplab.verdict import judge, parse
    return judge.present(parse.parse(text), want(entry))


def forbidden(entry, text: str):
    from bringuplab.verdict import judge, parse
    return judge.absent(parse.parse(text), want(entry))


def restarted(entry, text: str):
    from bringuplab.verdict import judge, parse
    return judge.restart(parse.parse(text), want(entry))


def test_fault_entries_expect_the_failed_cpu_named_and_offline():
    from bringuplab.runs import matrix
    entry = matrix.fault("nosipi", 3)
    assert entry.expect_online == 7
    assert "smpboot_fault=nosipi:3" in entry.append
    assert "lab.cpu=3" in entry.append
    serial = matrix.fault("nosipi", 3, parallel=False)
    assert serial.append.endswith(matrix.SERIAL)
    gave_up = ("[ 20.1] smpboot: CPU3 did not come up within 10 seconds, "
               "put back under INIT\n")
    again = "[ 20.2] smpboot: CPU3: starting it again, alone\n"
    assert missing(entry, gave_up) == []
    assert missing(entry, gave_up.replace("CPU3", "CPU31")) != []
    # Alone in not coming up (the others alive): no second start
    assert restarted(entry, gave_up + again) != []
    assert restarted(entry, gave_up) == []
    # a serial bringup never starts a CPU again
    assert forbidden(serial, gave_up + again) != []
    assert forbidden(serial, gave_up) == []
    # Stuck with the lock, others held up behind it (started again after
    # it): a second start alone first; none held up: none
    stall = matrix.fault("rmstall", 3)
    kicked = "[  1.0] .... node  #1, CPUs:    #3 #5 #7\n"
    others = "[ 20.3] .... node  #1, CPUs:    #5 #7\n"
    assert missing(stall, gave_up) == []
    assert restarted(stall, kicked + gave_up) == []
    assert restarted(stall, kicked + gave_up + others) != []
    assert restarted(stall, kicked + gave_up + again + others) == []
    # started after it for the first time (a later wave): not stopped
    assert restarted(stall, gave_up + others) == []
    assert missing(matrix.fault("rmstall", 3, parallel=False), gave_up) == []


def test_expected_fault_line_is_excused_other_splats_are_not():
    from bringuplab.runs import matrix
    from bringuplab.verdict import judge, parse
    log = (Path(__file__).parent / "logs" / "series-intel-16-timing.log"
           ).read_text()
    extra = ("[ 10.8] smpboot: CPU3 did not come up within 10 seconds, "
             "put back under INIT\n")
    from bringuplab.verdict.judge import Expect
    entry = matrix.fault("nosipi", 3, cpus=16, parallel=False)
    entry = matrix.replace(entry, expect_online=16, plan=("cpus",))
    assert judge.judge(parse.parse(log + extra),
                       Expect(16, 16, 16)).status == "fail"
    got = judged(entry, log + extra)
    assert got.ok, got.reasons
    got = judged(entry, log + extra + "[ 11.0] WARNING: CPU: 1 PID: 1 "
                 "at x\n")
    assert got.status == "fail"


@pytest.mark.parametrize("kind,cpu,tcg,parallel", [
    ("nosipi", 3, "single", True), ("rmstall", 1, "multi", True),
    ("rmstall", 5, "single", False)])
def test_fault_logs_pass_only_with_their_lines(kind, cpu, tcg, parallel):
    """Real console logs of the debug kernel (series + lab overlay) with
    smpboot_fault=<kind>:N: CPU N given up and put under INIT (in a
    parallel bringup after a second start alone), the others up,
    onlining CPU N later fails."""
    from dataclasses import replace
    from bringuplab.runs import matrix
    from bringuplab.verdict import judge, parse
    entry = matrix.fault(kind, cpu, 8, tcg, parallel)
    text = (Path(__file__).parent / "logs" / f"v2-{entry.name}.log"
            ).read_text()
    assert missing(entry, text) == []
    assert parse.parse(text).cpus_online == 7
    got = judged(entry, text)
    assert got.ok, got.reasons
    # without the entry's lines the failed CPU's splat fails the boot
    unexcused = judge.judge(parse.parse(text),
                            replace(want(entry), present=()))
    assert [r.rule for r in unexcused.reasons] == ["splat"]
    # Another CPU's lines are not there
    assert missing(matrix.fault(kind, cpu + 1, 8, tcg, parallel), text)


def test_unknown_fault_kind_is_a_lab_error():
    from bringuplab.runs import matrix
    from bringuplab.errors import LabError
    with pytest.raises(LabError, match="unknown fault 'melt'"):
        matrix.fault("melt", 3)


def test_run_entries_keeps_order_and_runs_mttcg_boots_alone(monkeypatch):
    """With jobs > 1 round-robin boots share the host, MTTCG boots run
    on their own afterwards; rows come back in the order asked for."""
    import threading
    from bringuplab.guest import boot
    from bringuplab.runs import matrix
    from bringuplab.verdict import result
    log = (Path(__file__).parent / "logs" / "good-intel-1cpu.log")
    started: list = []
    running: list = []
    lock = threading.Lock()

    def fake_run(spec, quiet=False):
        with lock:
            started.append(spec.label)
            running.append(spec.label)
            if spec.label.startswith("multi"):
                assert running == [spec.label], running
        res = result.of_log(log.read_text(), spec.expectations(), str(log))
        with lock:
            running.remove(spec.label)
        return res
    monkeypatch.setattr(boot, "run", fake_run)
    monkeypatch.setattr(boot, "kernel_nr_cpus", lambda kernel: 512)
    todo = [matrix.Entry(f"{tcg}-{i}", MachineSpec(cpus, tcg=tcg))
            for i, (tcg, cpus) in enumerate([("single", 1), ("multi", 1),
                                             ("single", 4), ("single", 2),
                                             ("multi", 2), ("single", 8)])]
    rows = matrix.run_entries(todo, BZ, None, False, jobs=2)
    assert [r.entry.name for r in rows] == [e.name for e in todo]
    assert [s for s in started if s.startswith("multi")] == started[-2:]
    # The largest round-robin boots are handed out first.
    assert matrix.shared_order(todo) == [5, 2, 3, 0]


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_entries_counts_a_refused_machine_as_one_failed_boot(
        monkeypatch, tmp_path, jobs):
    """QEMU refusing one machine fails that boot with QEMU's words; the
    other boots still run and pass (it used to abort the whole soak)."""
    from bringuplab.guest import boot
    from bringuplab.runs import matrix
    from bringuplab.verdict import result
    from bringuplab.errors import QemuRefused
    from reallogs import good_1cpu
    log = tmp_path / "good-intel-1cpu.log"
    log.write_text(good_1cpu())
    refused = tmp_path / "refused.log"
    refused.write_text("qemu-system-x86_64: nope\n")

    def fake_run(spec, quiet=False):
        if spec.label.startswith("bad"):
            raise QemuRefused("QEMU refused the machine: qemu-system-x86_64:"
                              f" nope (log: {refused})", str(refused))
        return result.of_log(log.read_text(), spec.expectations(), str(log))
    monkeypatch.setattr(boot, "run", fake_run)
    monkeypatch.setattr(boot, "kernel_nr_cpus", lambda kernel: 512)
    todo = [matrix.Entry("ok-0", MachineSpec(1)),
            matrix.Entry("bad-1", MachineSpec(1)),
            matrix.replace(matrix.fault("nosipi", 1), name="bad-fault"),
            matrix.Entry("ok-3", MachineSpec(1))]
    rows = matrix.run_entries(todo, BZ, None, False, jobs=jobs)
    assert [r.ok for r in rows] == [True, False, False, True]
    for row in rows[1:3]:
        assert row.result.verdict == "infra"
        assert row.result.reasons == [
            "QEMU refused the machine: qemu-system-x86_64: nope"]


@pytest.mark.parametrize("parallel", [True, False])
def test_tscwarp_entry_wants_every_cpu_and_the_warp_named(parallel):
    """A TSC warp fails no CPU: all 8 must be up and go off and on, and
    the TSC test must name CPU 6 and turn off the TSC clock."""
    from bringuplab.runs import matrix
    entry = matrix.fault("tscwarp", 6, parallel=parallel)
    assert entry.expect_online is None and entry.machine.cpus == 8
    assert entry.plan == ("cpus", "hotplug")
    assert "smpboot_fault=tscwarp:6" in entry.append
    assert not any("wakeup" in p for p in entry.dmesg)
    assert all("{cpu}" not in p for p in entry.dmesg)


@pytest.mark.parametrize("log", ["v2-fault-tscwarp-cpu6-8-single.log",
                                 "v2-fault-tscwarp-cpu6-8-single-serial.log"])
def test_tscwarp_logs_pass_with_their_lines_only(log):
    """Real console logs of the debug kernel with smpboot_fault=tscwarp:6,
    parallel and serial: all 8 CPUs up, the warp named by the serial
    test, the TSC clock off. Another CPU's lines are not there."""
    from bringuplab.runs import matrix
    from bringuplab.verdict import parse
    text = (Path(__file__).parent / "logs" / log).read_text()
    entry = matrix.fault("tscwarp", 6)
    assert missing(entry, text) == []
    got = judged(entry, text)
    assert got.ok and parse.parse(text).cpus_online == 8, got.reasons
    assert missing(matrix.fault("tscwarp", 5), text)


@pytest.mark.parametrize("log", ["v2-fault-tscwarp-cpu6-8-single.log",
                                 "v2-fault-tscwarp-cpu6-8-single-serial.log"])
def test_tsc_turned_off_fails_a_boot_which_did_not_ask_for_it(log):
    """The same logs judged as an ordinary boot: every CPU is up, but
    the TSC clock went off, which only a tscwarp entry may excuse."""
    from bringuplab.verdict import judge, parse
    from bringuplab.verdict.judge import Expect
    facts = parse.parse((Path(__file__).parent / "logs" / log).read_text())
    assert facts.cpus_online == 8
    got = judge.judge(facts, Expect(8, 8, 8, ("cpus", "hotplug")))
    assert got.status == "fail"
    assert [r.rule for r in got.reasons] == ["splat"]
    assert [s.split(":")[0] for s in facts.splats] == ["tsc-off"]


def test_soak_debug_scenario_boots_the_lockdep_and_the_kasan_kernel():
    from bringuplab.build import kconfig
    from bringuplab.runs import matrix, soak
    assert set(soak.DEBUG_FLAVOURS) == {"debug", "kasan"}
    assert set(soak.DEBUG_FLAVOURS) <= set(kconfig.FLAVOURS)
    entries = [e for f in soak.DEBUG_FLAVOURS for e in soak.debug_entries(f)]
    names = [e.name for e in entries]
    assert len(names) == len(set(names)) == 16
    kasan = [e for e in entries if e.name.startswith("kasan-")]
    assert {(e.machine.cpus, e.machine.tcg, e.parallel)
            for e in kasan} == {
        (n, tcg, par) for n in (16, 32) for tcg in ("single", "multi")
        for par in (True, False)}
    # 4-level paging (see matrix.KASAN_APPEND); serial ones still serial.
    assert all("no5lvl" in e.append.split() for e in kasan)
    assert all(("cpuhp.parallel=0" in e.append.split()) == (not e.parallel)
               for e in entries)
    assert all("no5lvl" in e.append.split()
               for e in matrix.entries("kasan"))


def test_soak_pick_reruns_one_entry():
    from bringuplab.runs import soak
    from bringuplab.errors import LabError
    todo = {"matrix": soak.random_entries(3, 1), **soak.fixed(),
            "faults": soak.fault_entries()}
    name = "m-x2apic-ids-above-255-single"
    picked = soak._pick(todo, [name, "nosmp"], 3)
    assert [e.name for e in picked["matrix"]] == [
        f"{name}#{i}" for i in (1, 2, 3)]
    assert picked["matrix"][0].machine == MachineSpec(
        20, "5x17x2", 1, "intel", True, high=10)
    assert len(picked["cmdline"]) == 3 and not picked["faults"]
    with pytest.raises(LabError, match="unknown soak entry 'x'"):
        soak._pick(todo, ["x"], 1)


def test_linux_topologies_of_the_profiles():
    """What the guest may count with every vCPU online: Intel as QEMU
    is told; AMD without TOPOEXT also each thread a core (Linux 6.1)."""
    from bringuplab.guest import machine
    intel = machine.Machine(64, 2, 16, 2, numa=2)
    amd = machine.Machine(32, 2, 8, 2, numa=2, profile="amd")
    amd_flat = machine.Machine(8, 1, 8, 1, profile="amd")
    assert intel.linux_topologies() == [(2, 32, 2)]
    assert amd.linux_topologies() == [(2, 16, 2), (2, 32, 1)]
    assert amd_flat.linux_topologies() == [(1, 8, 1)]
