"""`make soak`: the proof that bringup does not hang or lose a CPU.

Scenarios, each a list of boots with a verdict per boot:
  matrix    - random (seeded) machines over 1..256 vCPUs, both profiles,
              APIC modes, sparse APIC IDs, SMT on/off, 1-4 NUMA nodes,
              both TCG modes, both bringup modes; a few >255 APIC IDs;
              above 128 vCPUs (rarely) Intel, x2APIC, round-robin and
              the guest kernel at 100 Hz
  cmdline   - maxcpus= then sysfs online, nr_cpus=, possible_cpus=, nosmp,
              nox2apic, garbage or no cpuhp.parallel value
  hotplug   - cpu-on-off-test.sh -a and concurrent hotplug writers
  kexec     - a chain of kexec reboots, all CPUs online each time
  suspend   - S3 cycles woken by the RTC, all CPUs back each time
  debug     - the lockdep kernel and the KASAN kernel at 16 and 32 vCPUs,
              both TCG modes, both bringup modes, a hotplug cycle each
  faults    - injected AP failures (smpboot_fault=, debug kernel): no
              startup IPI, stuck in the trampoline holding the real-mode
              stack lock, dead after it announced itself; the boot
              finishes, the failed CPU is named and stays offline,
              onlining it later fails, other CPUs still go off and on;
              and a TSC warp, which the TSC test must name while every
              CPU comes up and goes off and on again; and a CPU which INIT
              cannot stop, after which no CPU is started
"""
import random
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Dict, List, Optional

from bringuplab.build import kernel, tree
from bringuplab.guest import initramfs
from bringuplab.host import packages
from bringuplab.report import columns
from bringuplab.runs import matrix
from bringuplab.verdict import judge
from bringuplab.errors import LabError, UsageError
from bringuplab.guest.machinespec import MachineSpec
from bringuplab.runs.matrix import SERIAL, Entry, high_apic
from bringuplab.report import record
from bringuplab.progress import Progress

SIZES = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]
WEIGHTS = [3, 6, 3, 8, 4, 10, 5, 10, 4, 8, 2, 4, 1, 1, 0.5, 0.5]
# Machines above TICK_LIMIT vCPUs boot the guest flavour at 100 Hz
# (LARGE_FLAVOUR): under round-robin TCG the periodic ticks of the CPUs
# online livelock such a boot at the guest's 250 Hz (170 vCPUs), and at
# 100 Hz a 512-vCPU one still livelocks before PID 1, so the draw ends at
# 256 (docs/limits.md). They are Intel and x2APIC (APIC IDs above 255
# on most layouts): the AMD profile's bringup is 7x slower per AP under
# TCG at 128 vCPUs already, which would take the draw past its timeout.
TICK_LIMIT = 128
LARGE_FLAVOUR = "hz100"


def _layouts(cpus: int) -> List[tuple]:
    """(sockets, cores, threads) that multiply to cpus, at most 4 sockets."""
    return [(s, cpus // (s * t), t) for s in (1, 2, 4) for t in (1, 2)
            if cpus % (s * t) == 0 and cpus // (s * t) >= 1]


def random_entries(count: int, seed: int) -> List[Entry]:
    rng = random.Random(seed)
    out: List[Entry] = []
    for num in range(count):
        cpus = rng.choices(SIZES, WEIGHTS)[0]
        sockets, cores, threads = rng.choice(_layouts(cpus))
        nodes = [k for k in (1, 2, 3, 4) if (sockets * cores) % k == 0]
        numa = rng.choice(nodes)
        profile = rng.choice(["intel", "amd"])
        x2apic = rng.random() < 0.5
        tcg = "multi" if cpus <= 32 and rng.random() < 0.4 else "single"
        parallel = rng.random() < 0.7
        # QEMU's AMD profile shows Linux no SMT siblings (no TOPOEXT):
        # unpatched 6.1 too keeps all CPUs online with nosmt there.
        nosmt = (threads == 2 and rng.random() < 0.15
                 and profile == "intel")
        if cpus > TICK_LIMIT:
            profile, x2apic, tcg, nosmt = "intel", True, "single", False
        append = " ".join(a for a in ((SERIAL if not parallel else ""),
                                       ("nosmt" if nosmt else "")) if a)
        online = cpus // 2 if nosmt else cpus
        name = (f"m{num:03d}-{profile}-{cpus}-{sockets}x{cores}x{threads}"
                f"-n{numa}-{'x2' if x2apic else 'x'}apic-{tcg}"
                f"{'-serial' if not parallel else ''}"
                f"{'-nosmt' if nosmt else ''}")
        out.append(Entry(name, MachineSpec(
            cpus, f"{sockets}x{cores}x{threads}", numa, profile, x2apic,
            tcg), parallel, ("cpus",), append, expect_online=online))
    return out + high_apic_entries()


def high_apic_entries() -> List[Entry]:
    """The machines of the matrix scenario that are not drawn at random:
    APIC IDs above 255 (matrix.high_apic) in both TCG modes."""
    return [high_apic(f"m-x2apic-ids-above-255-{tcg}", tcg)
            for tcg in ("single", "multi")]


def fixed() -> Dict[str, List[Entry]]:
    eight = MachineSpec(8, "2x2x2", 2)
    return {
        "cmdline": [
            Entry("maxcpus-then-online", eight, append="maxcpus=2",
                  plan=("online-all", "cpus"), expect_boot=2),
            Entry("nr-cpus-below-present", eight, append="nr_cpus=4",
                  expect_online=4),
            Entry("possible-cpus-above", eight, append="possible_cpus=12"),
            Entry("nosmp", eight, append="nosmp", expect_online=1,
                  parallel=False),
            Entry("nox2apic", replace(eight, x2apic=True),
                  append="nox2apic"),
            Entry("parallel-garbage", eight, append="cpuhp.parallel=xyz"),
            # Parameters without a value: a warning and the default
            # (v1 dereferenced NULL on cpuhp.parallel_window).
            Entry("parallel-no-value", eight, append="cpuhp.parallel",
                  dmesg=(r"cpuhp.parallel= takes 0 or 1, parallel "
                         r"bringup stays on",)),
            Entry("parallel-window-no-value", eight,
                  append="cpuhp.parallel_window"),
        ],
        "hotplug": [
            Entry("selftest-all", eight, plan=("cpus", "selftest-all")),
            Entry("stress-1000", eight, plan=("cpus", "stress"),
                  append="lab.stress=1000", timeout=1200),
            Entry("stress-1000-mttcg", replace(eight, tcg="multi"),
                  plan=("cpus", "stress"), append="lab.stress=1000",
                  timeout=1200),
        ],
        # xAPIC: after kexec with QEMU's interrupt remapping on, the base
        # kernel already panics ("timer doesn't work through
        # Interrupt-remapped IO-APIC"), see tests/logs/base-kexec-*.
        "kexec": [Entry("kexec-10", replace(eight, x2apic=False),
                        plan=("cpus", "kexec"), append="lab.kexec=10",
                        timeout=900)],
        "suspend": [Entry("s3-5", eight, plan=("cpus", "suspend"),
                          append="lab.suspend=5", timeout=600)],
    }


def fault_entries() -> List[Entry]:
    return [matrix.fault(kind, cpu, cpus, tcg, par, x2)
            for kind in matrix.FAULT_LINES
            for cpu, cpus, tcg, x2 in ((3, 8, "single", False),
                                       (1, 16, "multi", None),
                                       (15, 16, "single", True))
            for par in (True, False)]


# Kernel flavours of the debug scenario (kconfig.FLAVOURS): lockdep and
# atomic-sleep checks; KASAN, kept apart so that the fault boots, which
# use the lockdep kernel, stay fast.
DEBUG_FLAVOURS = ("debug", "kasan")


def flavour_of(scenario: str, entry: Entry) -> str:
    """The kernel flavour (kconfig.FLAVOURS) that boots `entry`."""
    if scenario == "faults":
        return "debug"
    if scenario == "debug":
        return next(f for f in DEBUG_FLAVOURS
                    if entry.name.startswith(f + "-"))
    if scenario == "matrix" and entry.machine.cpus > TICK_LIMIT:
        return LARGE_FLAVOUR
    return "guest"


def debug_entries(flavour: str = "debug") -> List[Entry]:
    base = matrix.KASAN_APPEND if flavour == "kasan" else ""
    return [Entry(f"{flavour}-{n}-{tcg}{'-serial' if not par else ''}",
                  MachineSpec(n, f"2x{n // 4}x2", 2, tcg=tcg), par,
                  ("cpus", "hotplug"),
                  " ".join(filter(None, (base, "" if par else SERIAL))),
                  timeout=1800)
            for n in (16, 32) for tcg in ("single", "multi")
            for par in (True, False)]


@dataclass
class Summary:
    scenario: str
    tried: int
    passed: int
    failed: int
    hung: int
    infra: int          # boots QEMU would not start

    @property
    def bad(self) -> int:
        return self.tried - self.passed


def tally(scenario: str, statuses: List[str]) -> Summary:
    """The judge's statuses of one scenario's boots, counted."""
    return Summary(scenario, len(statuses), statuses.count(judge.PASS),
                   statuses.count(judge.FAIL), statuses.count(judge.HANG),
                   statuses.count(judge.INFRA))


def resumed(rec: record.Record, command: str, patches: str) -> List[dict]:
    """The boots of a soak cut off earlier, to be kept by one that goes
    on from it: the same soak (command), of the same patches/, else
    UsageError."""
    where = rec.source or "the record"
    if rec.kind != "soak":
        raise UsageError(f"{where} is a {rec.kind} record, not a soak's")
    if rec.results.get("command") != command:
        raise UsageError(f"{where} is of `{rec.results.get('command')}`, "
                         f"not `{command}`")
    theirs = rec.provenance.patches_revision if rec.provenance else ""
    if theirs in ("", record.UNKNOWN) or theirs != patches:
        raise UsageError(f"{where} booted patches/ of {theirs[:12] or '?'}"
                         f", this tree's are of {patches[:12]}")
    return list(rec.results.get("boots", []))


def render_summary(sums: List[Summary]) -> str:
    return columns.table(
        ["scenario", "boots", "passed", "failed", "hung", "infra"],
        [[s.scenario, s.tried, s.passed, s.failed, s.hung, s.infra]
         for s in sums])


SCENARIOS = ["matrix", "cmdline", "hotplug", "kexec", "suspend", "debug",
             "faults"]


def _pick(todo: Dict[str, List[Entry]], names: List[str],
          repeat: int) -> Dict[str, List[Entry]]:
    """Only the entries named, each `repeat` times, in their scenarios."""
    known = {e.name for entries in todo.values() for e in entries}
    for name in names:
        if name not in known:
            raise LabError(f"unknown soak entry '{name}' (see the names in "
                           "its record in results/; matrix ones depend on "
                           "--boots and --seed)")
    return {scen: [replace(e, name=f"{e.name}#{i}" if repeat > 1 else e.name)
                   for e in entries if e.name in names
                   for i in range(1, repeat + 1)]
            for scen, entries in todo.items()}


def soak_command(boots: int, seed: int, only: Optional[List[str]],
                 entries: Optional[List[str]], repeat: int) -> str:
    """The command line that runs this soak again (make soak if whole)."""
    whole = not only and not entries
    return "make soak" if whole and boots == 300 and seed == 1 else (
        f"tools/bringup soak --boots {boots} --seed {seed}"
        + (f" --only {','.join(only)}" if only else "")
        + "".join(f" --entry {e}" for e in entries or [])
        + (f" --repeat {repeat}" if repeat > 1 else ""))


@dataclass(frozen=True)
class Kernels:
    """The guest kernel and initramfs a soak boots (the debug flavours
    are built as their scenarios come), and how."""
    guest: kernel.Kernel
    initrd: Path
    with_kernel: Path          # the initramfs that carries the kernel
    modes: bool                # the series': check the bringup mode
    jobs: int

    def boot(self, scenario: str, entries: List[Entry],
             done: Callable[[matrix.Row], None]) -> List[matrix.Row]:
        """Boot one scenario's entries, each with its kernel (other
        flavours than the guest's built as they are needed)."""
        initrd = self.with_kernel if scenario == "kexec" else self.initrd
        rows: List[matrix.Row] = []
        for flavour in dict.fromkeys(flavour_of(scenario, e)
                                     for e in entries):
            mine = [e for e in entries if flavour_of(scenario, e) == flavour]
            kern = self.guest if flavour == "guest" else \
                kernel.build(flavour)
            rows += matrix.run_entries(mine, kern, initrd, self.modes,
                                       self.jobs, done)
        return rows


def plan(boots: int, seed: int, only: Optional[List[str]],
         entries: Optional[List[str]], repeat: int
         ) -> Dict[str, List[Entry]]:
    """Scenario -> the entries a soak of these options boots; LabError
    for options that cannot go together."""
    if repeat < 1 or (repeat > 1 and not entries):
        raise LabError(f"--repeat {repeat}: at least 1, and more only with "
                       "--entry")
    for name in only or []:
        if name not in SCENARIOS:
            raise LabError(f"unknown scenario '{name}' (known: "
                           f"{', '.join(SCENARIOS)})")
    todo: Dict[str, List[Entry]] = {
        "matrix": random_entries(boots, seed), **fixed(),
        "debug": [e for flavour in DEBUG_FLAVOURS
                  for e in debug_entries(flavour)],
        "faults": fault_entries()}
    if entries:
        todo = _pick(todo, entries, repeat)
        if not any(todo[scen] for scen in only or SCENARIOS):
            raise LabError("no --entry is in the --only scenarios")
    return {s: es for s, es in todo.items() if not only or s in only}


def run(boots: int = 300, seed: int = 1,
        only: Optional[List[str]] = None, jobs: int = 1,
        entries: Optional[List[str]] = None, repeat: int = 1,
        resume: Optional[str] = None) -> record.Record:
    """The soak; its record, saved in results/ when the soak starts and
    again after every boot, so a soak cut off keeps what it booted and
    `resume` (that record) goes on from there. What it prints as it
    goes is progress (the command sends it to stderr)."""
    if jobs < 1:
        raise LabError(f"--jobs {jobs}: at least 1")
    todo = plan(boots, seed, only, entries, repeat)
    command = soak_command(boots, seed, only, entries, repeat)
    kept: List[dict] = []
    earlier = 0.0
    if resume:
        rec = record.load(Path(resume))
        kept = resumed(rec, command, record.patches_revision())
        earlier = float(rec.results.get("minutes", 0))
        done_names = {b["name"] for b in kept}
        todo = {s: [e for e in es if e.name not in done_names]
                for s, es in todo.items()}
    packages.ensure(list(packages.NEEDS))
    print("lab: soak: " + tree.create())
    guest = kernel.build("guest")
    initrd = initramfs.build()
    with_kernel = initramfs.build(kernel=guest.image)
    modes = bool(tree.series_files())
    started = record.now()
    began = time.monotonic()
    booted: List[dict] = list(kept)
    planned = len(kept) + sum(len(es) for es in todo.values())
    scenarios = {b["scenario"] for b in kept} | {s for s, es in todo.items()
                                                 if es}
    steps = Progress(planned - len(kept), "soak")
    lock = threading.Lock()
    path: List[Path] = []
    origin: List[record.Provenance] = []

    def save() -> record.Record:
        """The record as it stands (boots run from a pool: locked)."""
        sums = [tally(scen, [b["verdict"] for b in booted
                             if b["scenario"] == scen])
                for scen in SCENARIOS if scen in scenarios]
        tried = sum(s.tried for s in sums)
        bad = sum(s.bad for s in sums)
        infra = sum(s.infra for s in sums)
        rec = record.make("soak", not bad, {
            "command": command, "jobs": jobs,
            "minutes": round(earlier + (time.monotonic() - began) / 60, 1),
            "series": len(tree.series_files()),
            "scenarios": [asdict(s) for s in sums],
            # failed: failed or hung; infra: QEMU would not start them
            "passed": tried - bad, "failed": bad - infra, "infra": infra,
            "complete": len(booted) == planned,
            "not_run": planned - len(booted),
            "resumed_from": resume or "", "boots": booted}, started)
        # The revisions the soak started from: the lab may be committed
        # to while it runs for hours. Kernels and the end are current.
        if origin:
            rec.provenance = replace(origin[0],
                                     configs=rec.provenance.configs,
                                     ended=rec.provenance.ended)
        else:
            origin.append(rec.provenance)
        if path:
            record.rewrite(rec, path[0])
        else:
            path.append(record.save(rec))
        return rec

    def done_in(scenario: str) -> Callable[[matrix.Row], None]:
        """What to do with each boot of `scenario` as it is judged."""
        def done(row: matrix.Row) -> None:
            with lock:
                booted.append(boot_record(scenario, row))
                save()
                steps.done(row.entry.name)
        return done
    save()
    print(f"lab: soak: record {path[0]}, rewritten after every boot")
    kernels = Kernels(guest, initrd, with_kernel, modes, jobs)
    for name in SCENARIOS:
        if todo.get(name):
            rows = kernels.boot(name, todo[name], done_in(name))
            print(f"{name}:\n{matrix.render(rows)}", flush=True)
    rec = save()
    print(render_summary([Summary(**s) for s in rec.results["scenarios"]]))
    print(f"{rec.results['passed']} passed, {rec.results['failed']} failed"
          + (f", {rec.results['infra']} not booted (infrastructure)"
             if rec.results["infra"] else "")
          + (f" (with {len(kept)} boots of {resume})" if kept else ""))
    print(f"lab: soak: record {path[0]}, console logs in build/logs")
    return rec


def boot_record(scenario: str, row: matrix.Row) -> dict:
    """One boot of the soak as its record keeps it."""
    return {"scenario": scenario, "flavour": flavour_of(scenario, row.entry),
            **matrix.row_record(row)}
