"""Named lists of boots, run in order and summarized."""
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

from bringuplab.guest import boot
from bringuplab.report import columns
from bringuplab.verdict import judge
from bringuplab.build.kernel import Kernel
from bringuplab.guest.machinespec import MachineSpec
from bringuplab.errors import LabError, QemuRefused
from bringuplab.verdict.result import BootResult, of_log


@dataclass(frozen=True)
class Entry:
    name: str
    machine: MachineSpec
    parallel: bool = True
    plan: Tuple[str, ...] = ("cpus",)
    append: str = ""
    expect_online: Optional[int] = None   # default: cpus
    expect_boot: Optional[int] = None     # default: expect_online
    timeout: float = 0
    # Regular expressions the console log must match (e.g. the line that
    # names a CPU which failed on purpose).
    dmesg: Tuple[str, ...] = ()
    # Regular expressions the console log must not match (e.g. a
    # recovery that must not have been needed).
    absent: Tuple[str, ...] = ()
    # judge.Expect.restart: a CPU given up in a parallel bringup
    restart: Optional[Tuple[int, str, str]] = None


SERIAL = "cpuhp.parallel=0"


def _both(entry: Entry) -> List[Entry]:
    """The entry in the default (parallel) mode and with the flag."""
    return [entry, replace(entry, name=entry.name + "-serial",
                           parallel=False,
                           append=(entry.append + " " + SERIAL).strip())]


# What dmesg must say for each injected fault (smpboot_fault=<kind>:<cpu>,
# the lab overlay of lab/patches/); {cpu} is the CPU which fails. v2 of
# the series said "within 10 seconds"; v3 gives up on a CPU found dead
# at once, so it does not name a time, and the hotplug core, which gives
# up on it, says "stopped" rather than x86's "put back under INIT".
GIVE_UP = (r"CPU{cpu} did not come up(?: within 10 seconds)?, "
           r"(?:put back under INIT|stopped)")
UNSTOPPED = (r"CPU{cpu} did not come up and could not be stopped: "
             r"it is not started again")
# A CPU which could not be stopped is not started again: the core says
# so as it refuses to kick it, when the online-fails step onlines it
# later, and in a parallel bringup already at its turn, if it went
# STUCK after it was started ahead.
REFUSED = r"CPU{cpu}: not started, it may still run from an earlier attempt"
FAULT_LINES: Dict[str, Tuple[str, ...]] = {
    "nosipi": (GIVE_UP,),     # never sent its startup IPIs
    "rmstall": (GIVE_UP,),    # stuck in the trampoline, stack lock held
    "tscwarp": (),            # fails no CPU: see TSCWARP_LINES
    # as nosipi, but INIT cannot stop it (SEV-ES, an APIC driver's own
    # wakeup): it might still arrive late, as itself, and park; it is
    # never started again, and no other CPU is held back for it
    "unstoppable": (UNSTOPPED, REFUSED),
    # as nosipi, and the handshake word is DEAD or STUCK while the
    # control CPU waits: the wait must fail at once, not take the CPU
    # for alive (v2 did, and then waited for its callin for ever). A
    # STUCK CPU stays stuck: nothing says it can be stopped now.
    "deadwait": (GIVE_UP,),
    # in a parallel bringup the CPU is STUCK before its turn to be
    # waited for: the kick that would start it again is refused
    "stuckwait": (f"(?:{UNSTOPPED}|{REFUSED})", REFUSED),
}
# Kicked along with others which did not come up either (held up
# behind the stuck one), a CPU is started again alone before it counts
# as failed: parallel bringup only. A CPU which alone did not come up
# (the others alive: nosipi, or an rmstall CPU which was the last to
# take the real-mode stack lock) is not. Which APs a stuck one holds up
# depends on the order they reach the lock, so the judge's `restart`
# rule asks the log: retried if and only if others were started again.
RETRY_LINE = r"CPU{cpu}: starting it again, alone"

# A TSC warp does not fail the CPU: every CPU comes up and goes off and on
# again; the point-to-point TSC test must name the CPU and turn off the TSC
# clock, as QEMU's TCG has no TSC_ADJUST to compensate with.
TSCWARP_LINES = (r"TSC synchronization \[CPU#\d+ -> CPU#{cpu}\]:",
                 r"Marking TSC unstable due to check_tsc_sync_source failed")


def high_apic(name: str, tcg: str = "single") -> Entry:
    """A machine with APIC IDs above 255 (5 sockets of 17 cores: IDs up
    to 289), which needs x2APIC with interrupt remapping. Half of the 20
    vCPUs take the topology's last slots: all 170 slots present
    livelocked in the periodic tick under round-robin TCG on a slow host
    (tests/logs/soak-rr170-periodic-tick-livelock.log)."""
    return Entry(name, MachineSpec(20, "5x17x2", 1, "intel", True, tcg,
                                   high=10),
                 dmesg=(r"Converting physical 4 to logical package 1",))


def fault(kind: str, cpu: int, cpus: int = 8, tcg: str = "single",
          parallel: bool = True, x2apic: Optional[bool] = None) -> Entry:
    """CPU `cpu` fails to come up on purpose (smpboot_fault=, debug
    kernel): the boot must finish with the others online and a line naming
    the CPU, and onlining it later must fail cleanly. With "tscwarp" the
    CPU comes up, but the TSC test must catch its TSC behind."""
    if kind not in FAULT_LINES:
        raise LabError(f"unknown fault '{kind}' (known: "
                       f"{', '.join(FAULT_LINES)})")
    append = f"smpboot_fault={kind}:{cpu}"
    absent: Tuple[str, ...] = ()
    restart: Optional[Tuple[int, str, str]] = None
    if kind == "tscwarp":
        plan, online = ("cpus", "hotplug"), None
        dmesg = tuple(p.format(cpu=cpu) for p in TSCWARP_LINES)
    elif kind == "unstoppable":
        # Both modes bring up every other CPU; onlining it later fails
        # at once, another CPU goes off and on again. Never started
        # again, so never started again alone either.
        append += f" lab.cpu={cpu}"
        plan, online = ("cpus", "online-fails"), cpus - 1
        dmesg = tuple(p.format(cpu=cpu) for p in FAULT_LINES[kind])
        absent = (RETRY_LINE.format(cpu=cpu),)
    else:
        append += f" lab.cpu={cpu}"
        plan, online = ("cpus", "online-fails"), cpus - 1
        dmesg = tuple(p.format(cpu=cpu) for p in FAULT_LINES[kind])
        if parallel:
            restart = (cpu, GIVE_UP.format(cpu=cpu),
                       RETRY_LINE.format(cpu=cpu))
        else:
            absent = (RETRY_LINE.format(cpu=cpu),)
    return Entry(f"fault-{kind}-cpu{cpu}-{cpus}-{tcg}"
                 f"{'-x2apic' if x2apic else ''}"
                 f"{'' if parallel else '-serial'}",
                 MachineSpec(cpus, f"2x{cpus // 4}x2", 2, x2apic=x2apic,
                             tcg=tcg),
                 parallel=parallel, plan=plan,
                 append=append if parallel else f"{append} {SERIAL}",
                 expect_online=online, timeout=900, dmesg=dmesg,
                 absent=absent, restart=restart)


# KASAN kernels boot with 4-level paging. With 5-level paging (TCG's CPU
# offers LA57) the unpatched 6.1 kernel gives KASAN false positives: the
# boot CPU's identify_cpu() clears x86_capability with interrupts on,
# before alternatives are patched, so an interrupt in that window sees
# pgtable_l5_enabled() false and KASAN calls its direct-map access a
# "wild-memory-access" (seen at 1.75 s, before any AP was started, in
# do_raw_spin_lock() under handle_edge_irq()).
KASAN_APPEND = "no5lvl"


MATRICES: Dict[str, List[Entry]] = {
    "check": [
        Entry("intel-1", MachineSpec(1)),
        Entry("intel-2-xapic", MachineSpec(2, "1x2x1", x2apic=False)),
        Entry("amd-2-x2apic", MachineSpec(2, "1x2x1", profile="amd",
                                          x2apic=True)),
        Entry("intel-4-x2apic-smt", MachineSpec(4, "1x2x2", x2apic=True)),
        Entry("amd-4-xapic-smt", MachineSpec(4, "1x2x2", profile="amd",
                                             x2apic=False)),
        *_both(Entry("intel-8-numa-mttcg",
                     MachineSpec(8, "2x2x2", 2, tcg="multi"))),
        Entry("amd-8-x2apic-mttcg",
              MachineSpec(8, "2x2x2", 2, "amd", True, "multi")),
        *_both(Entry("intel-16-selftest", MachineSpec(16, "2x4x2", 2),
                     plan=("cpus", "hotplug", "selftest"))),
        Entry("amd-16-x2apic-selftest",
              MachineSpec(16, "2x4x2", 2, "amd", True),
              plan=("cpus", "selftest")),
        *_both(Entry("intel-64-2x16x2", MachineSpec(64, "2x16x2", 2))),
        # INIT does not leave x2APIC mode: after a kexec from an x2APIC
        # kernel into one told nox2apic the APs are still in x2APIC mode,
        # where their xAPIC ID register does not answer.
        Entry("intel-8-kexec-x2apic-to-nox2apic",
              MachineSpec(8, "2x2x2", x2apic=True), plan=("cpus", "kexec"),
              append="lab.kexec=1 lab.kexec_add=nox2apic"),
        # Short forms of the soak scenarios (make soak runs the long ones).
        Entry("intel-8-maxcpus2-then-online", MachineSpec(8, "2x2x2", 2),
              append="maxcpus=2", plan=("online-all", "cpus"),
              expect_boot=2),
        Entry("amd-8-parallel-garbage",
              MachineSpec(8, "2x2x2", profile="amd"),
              append="cpuhp.parallel=xyz"),
        # The siblings, cancelled at boot, must be at CPUHP_OFFLINE (the
        # cpus step checks every offline CPU) and come up with SMT on.
        Entry("intel-8-nosmt-then-smt-on", MachineSpec(8, "2x2x2", 2),
              append="nosmt", plan=("cpus", "smt-on", "hotplug"),
              expect_online=4),
        # Primary threads first: the CPUs prepared at boot must be the
        # ones brought up, the others left at CPUHP_OFFLINE.
        Entry("intel-8-maxcpus4-smt", MachineSpec(8, "2x2x2", 2),
              append="maxcpus=4", plan=("cpus", "online-all"),
              expect_online=4),
        Entry("intel-8-stress-s3-mttcg",
              MachineSpec(8, "2x2x2", 2, tcg="multi"),
              plan=("cpus", "stress", "suspend"),
              append="lab.stress=200 lab.suspend=2"),
        # xAPIC: the base kernel itself panics after kexec on QEMU's
        # intel-iommu with interrupt remapping (tests/logs/base-kexec-*).
        Entry("amd-8-kexec-x2", MachineSpec(8, "2x2x2", profile="amd",
                                            x2apic=False),
              plan=("cpus", "kexec"), append="lab.kexec=2"),
        # APIC IDs above 255: the identity from the x2APIC ID, beyond
        # what an xAPIC ID or CPUID's initial one can hold
        high_apic("intel-20-x2apic-ids-above-255"),
    ],
    # Booted with the debug (lockdep) kernel.
    "debug": [Entry("debug-16-single", MachineSpec(16, "2x4x2", 2),
                    plan=("cpus", "hotplug")),
              Entry("debug-16-multi-x2apic",
                    MachineSpec(16, "2x4x2", 2, x2apic=True, tcg="multi"),
                    plan=("cpus", "hotplug")),
              Entry("debug-16-multi-serial",
                    MachineSpec(16, "2x4x2", 2, tcg="multi"),
                    parallel=False, append=SERIAL),
              # An AP that never answers its startup IPIs, one stuck in
              # the trampoline with the real-mode stack lock held (in
              # MTTCG, with CPUs after it spinning on the lock), the same
              # in a serial bringup.
              fault("nosipi", 3), fault("rmstall", 1, 8, "multi"),
              fault("rmstall", 5, 8, "single", False),
              # A TSC which the warp test must catch, with all CPUs up.
              fault("tscwarp", 6, 8, "single"),
              # An AP which INIT cannot stop: only it stays offline, in
              # both modes, and later onlines of other CPUs work.
              fault("unstoppable", 3, 8, "single", False),
              fault("unstoppable", 3, 8, "multi"),
              # The wait for an AP whose handshake says DEAD or STUCK
              # fails at once instead of releasing it.
              fault("deadwait", 2, 8, "single"),
              fault("stuckwait", 4, 8, "single", False)],
    # Booted with the KASAN kernel: the bringup and a hotplug cycle of
    # every CPU, both TCG modes, both bringup modes.
    "kasan": [Entry("kasan-16-multi",
                    MachineSpec(16, "2x4x2", 2, tcg="multi"),
                    plan=("cpus", "hotplug"), append=KASAN_APPEND),
              Entry("kasan-8-single-serial", MachineSpec(8, "2x2x2"),
                    parallel=False, append=f"{KASAN_APPEND} {SERIAL}",
                    plan=("cpus", "hotplug")),
              # Siblings which ran on their idle stacks at boot, then
              # onlined. A sibling left above CPUHP_OFFLINE fails the
              # boot (offline_stale, shown with the guest config); that
              # KASAN would also flag the unreset stack is not shown.
              Entry("kasan-8-nosmt-then-smt-on", MachineSpec(8, "2x2x2"),
                    append=f"{KASAN_APPEND} nosmt",
                    plan=("cpus", "smt-on", "hotplug"), expect_online=4)],
    "demo": _both(Entry("demo-32", MachineSpec(32, "2x8x2", 2))),
    # The series built with Debian's cloud-amd64 config (`bringup kernel
    # --config cloud`): 32 vCPUs, both modes, a hotplug cycle.
    "cloud": _both(Entry("cloud-32-2x8x2", MachineSpec(32, "2x8x2", 2),
                         plan=("cpus", "hotplug"), timeout=1800)),
    "quick": [Entry("intel-4", MachineSpec(4, "1x2x2")),
              Entry("amd-4", MachineSpec(4, "1x2x2", profile="amd"))],
}


def entries(name: str) -> List[Entry]:
    try:
        return MATRICES[name]
    except KeyError:
        raise LabError(f"unknown matrix '{name}' (known: "
                       f"{', '.join(MATRICES)})") from None


# Kernel parameters that leave every AP unstarted at boot.
NO_AP = re.compile(r"(?:^|\s)(?:nosmp|maxcpus=[01]|nr_cpus=1)(?:\s|$)")


def expect(entry: Entry, modes: bool) -> judge.Expect:
    """What a boot of `entry` must show; with `modes` (a kernel with the
    series) also the bringup mode line of the entry's mode."""
    online = entry.expect_online or entry.machine.cpus
    boot_cpus = online if entry.expect_boot is None else entry.expect_boot
    mode = None
    if modes:
        # No CPU to start at boot (nosmp, maxcpus=0 or 1, nr_cpus=1):
        # the kernel says so ("no secondary CPUs"), in either mode.
        # (nosmt starts the siblings too, to park them: a bringup.)
        mode = "none" if NO_AP.search(entry.append) \
            and entry.machine.cpus > 1 \
            else "parallel" if entry.parallel else "serial"
    return judge.Expect(
        entry.machine.cpus, online, boot_cpus,
        entry.plan, mode, entry.dmesg, entry.absent,
        tuple(entry.machine.make().linux_topologies()), entry.restart)


def spec(entry: Entry, kernel: Path, initrd: Path, nr_cpus: int = 512,
         modes: bool = False) -> boot.BootSpec:
    return boot.BootSpec(entry.machine.make(nr_cpus), kernel, initrd,
                         entry.append, list(entry.plan), entry.timeout,
                         entry.name, expect=expect(entry, modes))


# The rules of judge.py only an entry asks for (the rest a plain boot
# has too).
ENTRY_RULES = ("mode", "present", "absent", "restart")


@dataclass
class Row:
    entry: Entry
    result: BootResult

    @property
    def ok(self) -> bool:
        return self.result.verdict == judge.PASS

    @property
    def problems(self) -> List[str]:
        """The reasons of the entry's own rules (ENTRY_RULES)."""
        return [why for why, rule in zip(self.result.reasons,
                                         self.result.rules)
                if rule in ENTRY_RULES]


def row_record(row: Row) -> dict:
    """One boot as the records of matrix and soak keep it."""
    res = row.result
    return {"name": row.entry.name, "tcg": row.entry.machine.tcg,
            "apic": "x2apic" if "x2apic" in res.apic else "xapic",
            "verdict": res.verdict, "mode": res.mode,
            "cpus": f"{res.cpus_online}/{res.cpus_expected}",
            "bringup_ms": res.bringup_ms,
            "why": "; ".join(dict.fromkeys(row.problems + res.reasons)),
            "log": res.log}


def counts(rows: List[Row]) -> Tuple[int, int]:
    """How many boots failed (failed or hung), and how many QEMU would
    not start: an infrastructure error, not a failure of the kernel."""
    infra = sum(r.result.verdict == judge.INFRA for r in rows)
    return sum(not r.ok for r in rows) - infra, infra


def run(name: str, kernel: Kernel, initrd: Path, expect_modes: bool,
        done: Optional[Callable[[Row], None]] = None) -> List[Row]:
    """Boot every entry of a named matrix."""
    return run_entries(entries(name), kernel, initrd, expect_modes,
                       done=done)


def refused(err: QemuRefused, want: judge.Expect) -> BootResult:
    """The judged result of a machine QEMU would not start (its log)."""
    text = Path(err.log).read_text(errors="replace")
    return of_log(text, want, err.log)


def shared_order(todo: List[Entry]) -> List[int]:
    """Indexes of the round-robin boots, largest first, so that the
    longest boot does not run last while the other job slots idle."""
    return sorted((i for i, e in enumerate(todo)
                   if e.machine.tcg != "multi"),
                  key=lambda i: -todo[i].machine.cpus)


def run_entries(todo: List[Entry], kernel: Kernel, initrd: Path,
                expect_modes: bool, jobs: int = 1,
                done: Optional[Callable[[Row], None]] = None) -> List[Row]:
    """Boot every entry, rows in the order of `todo`; with expect_modes
    the dmesg bringup mode must match the entry's (parallel by default,
    serial with the flag). Round-robin TCG boots, one host thread each,
    run `jobs` at a time, largest first; MTTCG boots run alone, as their
    vCPU threads need every host core (starved vCPUs make RCU stall
    warnings). `done` is told of each row as it is judged (progress).
    """
    nr_cpus = boot.kernel_nr_cpus(kernel)

    def counted(entry: Entry) -> Row:
        row = one(entry)
        if done:
            done(row)
        return row

    def one(entry: Entry) -> Row:
        try:
            result = boot.run(spec(entry, kernel.image, initrd, nr_cpus,
                                   expect_modes), quiet=True)
        except QemuRefused as err:
            # One machine QEMU will not start is one boot with an
            # infrastructure error, not the end of a 300-boot run.
            result = refused(err, expect(entry, expect_modes))
        print(f"lab: {entry.name}: {result.verdict}, {result.cpus_online}/"
              f"{result.cpus_expected} online, log {result.log}",
              file=sys.stderr, flush=True)
        return Row(entry, result)
    if jobs <= 1:
        return [counted(entry) for entry in todo]
    rows: Dict[int, Row] = {}
    shared = shared_order(todo)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        rows.update(zip(shared, pool.map(lambda i: counted(todo[i]),
                                         shared)))
    for i, entry in enumerate(todo):
        if i not in rows:
            rows[i] = counted(entry)
    return [rows[i] for i in range(len(todo))]


def render(rows: List[Row]) -> str:
    headers = ["boot", "tcg", "apic", "verdict", "mode", "cpus",
               "bringup ms", "why"]
    body = []
    for row in rows:
        res = row.result
        why = "; ".join(res.reasons)
        body.append([row.entry.name, row.entry.machine.tcg,
                     "x2apic" if "x2apic" in res.apic else "xapic",
                     res.verdict, res.mode or "-",
                     f"{res.cpus_online}/{res.cpus_expected}",
                     columns.fmt_ms(res.bringup_ms), why[:70]])
    return columns.table(headers, body)
