"""`make bench`: our series against upstream 6.12, side by side.

Boots are interleaved (A B C D A B C D ...) so that drift of this noisy
machine hits every kernel and mode alike; results are medians.
"""
import json
import shutil
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import boot, hostcpu, initramfs, kernel, machine as machmod, \
    report, tree, upstream, worktree
from .errors import LabError
from .paths import BUILD, ROOT

RESULTS = ROOT / "bench"


@dataclass(frozen=True)
class Variant:
    name: str
    kernel: str        # ours | upstream
    append: str


# Our kernel also prints its per-phase bringup report ("bringup_timing");
# the switch costs a flag test per phase and changes nothing else.
VARIANTS = [Variant("ours-parallel", "ours", "bringup_timing"),
            Variant("ours-serial", "ours", "bringup_timing cpuhp.parallel=0"),
            Variant("upstream-parallel", "upstream", ""),
            Variant("upstream-serial", "upstream", "cpuhp.parallel=0"),
            # The kernel the series applies to: what an operator runs today.
            Variant("base-serial", "base", "")]


def pick_variants(names: Optional[str]) -> List[Variant]:
    """The variants a comma list names, in the order of VARIANTS; all of
    them for None. Fewer variants mean more reps in the same time for
    the ratios that matter (e.g. issue 4's, which need no upstream
    serial mode, the slowest boot of all)."""
    if names is None:
        return list(VARIANTS)
    wanted = {name.strip() for name in names.split(",") if name.strip()}
    known = {var.name for var in VARIANTS}
    unknown = sorted(wanted - known)
    if unknown:
        raise LabError(f"unknown variant '{unknown[0]}' (known: "
                       f"{', '.join(var.name for var in VARIANTS)})")
    if not wanted:
        raise LabError("--variants names no variant")
    return [var for var in VARIANTS if var.name in wanted]


@dataclass(frozen=True)
class Setup:
    cpus: int
    topology: str
    numa: int
    tcg: str
    profile: str

    @property
    def name(self) -> str:
        return (f"{self.cpus}={self.topology} numa{self.numa} "
                f"{self.tcg} {self.profile}")


def _server(cpus: int, tcg: str, profile: str) -> Setup:
    """2 sockets, SMT 2, 2 NUMA nodes."""
    return Setup(cpus, f"2x{cpus // 4}x2", 2, tcg, profile)


SUITES: Dict[str, List[Setup]] = {
    "quick": [_server(64, "single", "intel"), _server(32, "multi", "intel"),
              _server(32, "single", "amd")],
    "full": [_server(n, tcg, prof) for prof in ("intel", "amd")
             for tcg in ("single", "multi") for n in (8, 16, 32, 64)]
    + [Setup(64, "64x1x1", 1, "single", "intel")],
    # The round-robin target machine alone, for many boots per cell: its
    # ratio moves with this host's emulation speed (docs/benchmark.md).
    "rr64": [_server(64, "single", "intel")],
}


@dataclass
class Sample:
    setup: str
    cpus: int
    tcg: str
    profile: str
    variant: str
    rep: int
    verdict: str
    bringup_ms: Optional[float]
    mode: Optional[str]
    log: str
    phases_us: Dict[str, int] = field(default_factory=dict)
    host_wall_ms: Optional[float] = None
    host_vcpu_ms: Optional[float] = None
    kick_total_us: Optional[int] = None
    post_bringup_ms: Optional[float] = None

    @property
    def host_busy(self) -> Optional[float]:
        if self.host_wall_ms is None or self.host_vcpu_ms is None:
            return None
        return hostcpu.HostCpu(self.host_wall_ms, self.host_vcpu_ms).busy


def check_suite(suite: str, reps: int) -> None:
    if suite not in SUITES:
        raise LabError(f"unknown suite '{suite}' (known: "
                       f"{', '.join(SUITES)})")
    if reps < 1:
        raise LabError("--reps must be at least 1")


def _build(which: str) -> Path:
    """The bzImage of one of the kernels a variant names."""
    if which == "ours":
        return kernel.build("guest")
    if which == "upstream":
        return upstream.build()
    base_tree = worktree.fresh(BUILD / "bench" / "base-linux", "base")
    return kernel.build("guest", base_tree, BUILD / "bench" / "out-base-guest",
                        tag="-base")


def run_suite(suite: str, reps: int,
              variants: Optional[List[Variant]] = None) -> List[Sample]:
    check_suite(suite, reps)
    variants = list(VARIANTS) if variants is None else variants
    print("lab: bench: " + tree.create())
    kernels = {which: _build(which)
               for which in dict.fromkeys(var.kernel for var in variants)}
    initrd = initramfs.build()
    samples: List[Sample] = []
    for rep in range(1, reps + 1):
        for setup in SUITES[suite]:
            mach = machmod.make(setup.cpus, setup.topology, setup.numa,
                                setup.profile, None, setup.tcg)
            for var in variants:
                spec = boot.BootSpec(mach, kernels[var.kernel], initrd,
                                     var.append, ["cpus"],
                                     label=f"bench-{var.name}-{setup.cpus}",
                                     host_cpu=True)
                res = boot.run(spec)
                samples.append(Sample(setup.name, setup.cpus, setup.tcg,
                                      setup.profile, var.name, rep,
                                      res.verdict, res.bringup_ms, res.mode,
                                      res.log, dict(res.phases_us),
                                      res.host_wall_ms, res.host_vcpu_ms,
                                      res.kick_total_us,
                                      res.post_bringup_ms))
    return samples


def medians(samples: List[Sample]) -> Dict[str, Dict[str, dict]]:
    """setup -> variant -> {median, min, max, n, failed, busy, host_n,
    host_median, host_min, host_max}; host_* by the host's clock."""
    out: Dict[str, Dict[str, dict]] = {}
    for smp in samples:
        cell = out.setdefault(smp.setup, {}).setdefault(
            smp.variant, {"ms": [], "host": [], "busy": [], "failed": 0})
        if smp.verdict == "pass" and smp.bringup_ms is not None:
            cell["ms"].append(smp.bringup_ms)
            if smp.host_wall_ms is not None:
                cell["host"].append(smp.host_wall_ms)
            if smp.host_busy is not None:
                cell["busy"].append(smp.host_busy)
        else:
            cell["failed"] += 1
    for per_setup in out.values():
        for cell in per_setup.values():
            values = cell.pop("ms")
            host = cell.pop("host")
            busy = cell.pop("busy")
            cell.update(n=len(values),
                        median=statistics.median(values) if values else None,
                        min=min(values) if values else None,
                        max=max(values) if values else None,
                        busy=statistics.median(busy) if busy else None,
                        host_n=len(host),
                        host_median=statistics.median(host) if host else None,
                        host_min=min(host) if host else None,
                        host_max=max(host) if host else None)
    return out


# The column phase_table() derives from the host's clock.
PRE_KICK = "pre-kick"


def pre_kick_us(smp: Sample) -> Optional[float]:
    """The bringup before the first kick: the whole by the host's clock
    less the series' TSC time from the first kick. In a parallel bringup
    that is the PREPARE states of all CPUs, in a serial one CPU 1's."""
    if smp.host_wall_ms is None or smp.kick_total_us is None:
        return None
    return max(0.0, smp.host_wall_ms * 1000.0 - smp.kick_total_us)


def phase_table(samples: List[Sample]) -> str:
    """Median ms per bringup phase of our kernel, per setup and mode."""
    cells: Dict[tuple, Dict[str, List[float]]] = {}
    names: List[str] = []
    for smp in samples:
        if smp.verdict != "pass" or not smp.phases_us:
            continue
        cell = cells.setdefault((smp.setup, smp.variant), {})
        phases: Dict[str, float] = {}
        pre = pre_kick_us(smp)
        if pre is not None:
            phases[PRE_KICK] = pre
        phases.update(smp.phases_us)
        for name, usec in phases.items():
            cell.setdefault(name, []).append(usec)
            if name not in names:
                names.append(name)
    if not cells:
        return ""
    rows = [[setup, variant] + [
        report.fmt_ms(statistics.median(cell[n]) / 1000.0)
        if n in cell else "-" for n in names]
        for (setup, variant), cell in cells.items()]
    return report.table(["machine", "kernel/mode"] + names, rows)


# The ratios pair_table() follows: (name, numerator, denominator).
PAIRS = [("ours par / ours serial", "ours-parallel", "ours-serial"),
         ("ours par / upstream par", "ours-parallel", "upstream-parallel"),
         ("upstream par / upstream serial", "upstream-parallel",
          "upstream-serial")]


def rep_ratios(samples: List[Sample], setup: str, num: str, den: str
               ) -> List[float]:
    """Host-clock bringup of variant `num` over `den`, for each rep in
    which both passed on `setup`."""
    times = {(s.rep, s.variant): s.host_wall_ms for s in samples
             if s.setup == setup and s.verdict == "pass" and s.host_wall_ms}
    return [times[(rep, num)] / times[(rep, den)]
            for rep in sorted({rep for rep, _ in times})
            if (rep, num) in times and (rep, den) in times]


def fmt_ratios(ratios: List[float]) -> Tuple[str, str]:
    """Median and min-max of some ratios, for a table."""
    return (f"{statistics.median(ratios):.2f}",
            f"{min(ratios):.2f}-{max(ratios):.2f}")


def pair_table(samples: List[Sample]) -> str:
    """Ratios of boots of the same rep, by the host's clock: the boots of
    one rep follow each other within seconds, so a change of this host's
    emulation speed between reps moves both sides of a pair alike, which
    the ratio of medians does not see."""
    rows = []
    for setup in dict.fromkeys(s.setup for s in samples):
        for name, num, den in PAIRS:
            ratios = rep_ratios(samples, setup, num, den)
            if ratios:
                rows.append([setup, name, *fmt_ratios(ratios),
                             str(len(ratios))])
    if not rows:
        return ""
    return report.table(["machine", "ratio", "median", "min-max", "pairs"],
                        rows)


PAIR_NOTE = (
    "Per rep, by the host's clock (boots of one rep follow each other "
    "within seconds, so a drift of this host's speed between reps moves "
    "both sides of a pair alike; the claims above are ratios of "
    "medians):")


def _ratio(num: Optional[float], den: Optional[float]) -> str:
    return "-" if not num or not den else f"{num / den:.2f}"


def render(stats: Dict[str, Dict[str, dict]], clock: str = "guest"
           ) -> str:
    """The table of medians and ratios, by the guest's printk clock or
    (clock="host") by the host's clock; see HOST_CLOCK_NOTE."""
    key = "" if clock == "guest" else "host_"
    rows = []
    for setup, per in stats.items():
        for var in VARIANTS:
            cell = per.get(var.name)
            if not cell or (key and cell.get(key + "median") is None):
                continue
            own_serial = per.get(var.kernel + "-serial", {}).get(
                key + "median")
            up_par = per.get("upstream-parallel", {}).get(key + "median")
            base = per.get("base-serial", {}).get(key + "median")
            med = cell.get(key + "median")
            count = cell["n"] if not key else cell.get("host_n", 0)
            row = [setup, var.name, report.fmt_ms(med),
                   f"{report.fmt_ms(cell.get(key + 'min'))}-"
                   f"{report.fmt_ms(cell.get(key + 'max'))}",
                   f"{count}" + (f" ({cell['failed']} failed)"
                                 if cell["failed"] else ""),
                   _ratio(med, own_serial), _ratio(med, up_par),
                   _ratio(med, base)]
            if not key:
                row.append("-" if cell.get("busy") is None
                           else f"{cell['busy']:.2f}")
            rows.append(row)
    head = ["machine", "kernel/mode", "median ms", "min-max", "boots",
            "x own serial", "x upstream par", "x base 6.1"]
    return report.table(head + ([] if key else ["host busy"]), rows)


# What the two tables measure; the guest's clock as measured on this lab's
# guests, see docs/benchmark.md, "Which clock".
HOST_CLOCK_NOTE = (
    "By the host's clock (the one the lab quotes): host wall time between "
    "the moments the guest's first and last bringup lines reached the "
    "console.")
GUEST_CLOCK_NOTE = (
    "By the guest's printk clock (dmesg \"smp: Bringing up\" to \"smp: "
    "Brought up\"), which runs slow in the bringup, a parallel one more: "
    "until after it the guest keeps time with the jiffies clocksource, "
    "and printk times cannot run ahead of that by more than a tick, so "
    "ticks lost while interrupts are off, or while the vCPU does not run, "
    "are lost time.")


def plot(samples: List[Sample], stats: Dict[str, Dict[str, dict]],
         png: Path) -> Optional[Path]:
    """Bringup ms vs vCPUs, one line per kernel/mode, for each TCG mode
    and profile that has more than one machine size."""
    if not shutil.which("gnuplot"):
        return None
    series: Dict[str, Dict[int, float]] = {}
    cells = [c for per in stats.values() for c in per.values()]
    stat = ("host_median" if cells and all(c.get("host_median") is not None
                                           for c in cells) else "median")
    for smp in samples:
        med = stats[smp.setup][smp.variant].get(stat)
        if med is not None and "x1x1" not in smp.setup:
            key = f"{smp.variant} ({smp.tcg}, {smp.profile})"
            series.setdefault(key, {})[smp.cpus] = med
    data = png.with_suffix(".dat")
    blocks = []
    for key, points in sorted(series.items()):
        blocks.append(f"# {key}\n" + "\n".join(
            f"{c} {ms:.3f}" for c, ms in sorted(points.items())))
    data.write_text("\n\n\n".join(blocks) + "\n")
    plots = ", ".join(f"'{data}' index {i} with linespoints title '{k}'"
                      for i, k in enumerate(sorted(series)))
    script = (f"set terminal png size 1000,650\nset output '{png}'\n"
              "set xlabel 'vCPUs'\nset ylabel 'bringup ms (median)'\n"
              "set logscale y\nset key outside right\n"
              "set title \"smp: Bringing up -> Brought up, by the "
              + ("host" if stat == "host_median" else "guest")
              + "'s clock\"\n"
              f"plot {plots}\n")
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return png


def command(suite: str, reps: int,
            variants: Optional[List[Variant]] = None) -> str:
    """The command that reruns this suite."""
    subset = variants is not None and len(variants) < len(VARIANTS)
    if suite == "quick" and reps == 3 and not subset:
        return "make bench"
    if suite == "full" and reps == 3 and not subset:
        return "make bench-full"
    return (f"tools/bringup bench --suite {suite} --reps {reps}"
            + (" --variants " + ",".join(var.name for var in variants or [])
               if subset else ""))


def result_stem(suite: str, variants: Optional[List[Variant]] = None
                ) -> str:
    """The name of a run's files in bench/: the suite's own for every
    variant, the suite and the variants' names for a subset, so that a
    subset run does not replace the record of the last full one."""
    if variants is None or len(variants) == len(VARIANTS):
        return suite
    return "+".join([suite] + [var.name for var in variants])


def load(path: Path) -> List[Sample]:
    """The samples of a bench's JSON (bench/SUITE.json or the raw file)."""
    try:
        data = json.loads(path.read_text())
        rows = data["samples"] if isinstance(data, dict) else data
        return [Sample(**row) for row in rows]
    except OSError as err:
        raise LabError(f"cannot read {path}: {err.strerror}") from err
    except (ValueError, KeyError, TypeError) as err:
        raise LabError(f"{path} is not a bench result ({err})") from err


def render_saved(path: Path) -> int:
    """Print a saved bench's tables again, by both clocks: older results
    (git show REV:bench/quick.json) get the host's clock table too."""
    samples = load(path)
    stats = medians(samples)
    print("by the host's clock:\n" + render(stats, "host"))
    print("\nby the guest's printk clock:\n" + render(stats))
    pairs = pair_table(samples)
    if pairs:
        print("\nratios within each rep, by the host's clock:\n" + pairs)
    phase = phase_table(samples)
    if phase:
        print("\nper-phase medians, ms:\n" + phase)
    return 0


def run(suite: str = "quick", reps: int = 3,
        variants: Optional[List[Variant]] = None) -> int:
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    samples = run_suite(suite, reps, variants)
    stats = medians(samples)
    host = render(stats, "host")
    print("by the host's clock:\n" + host)
    table = render(stats)
    print("\nby the guest's printk clock:\n" + table)
    pairs = pair_table(samples)
    if pairs:
        print("\nratios within each rep, by the host's clock:\n" + pairs)
    phase = phase_table(samples)
    if phase:
        print("\nper-phase medians, ms (bringup_timing; ap-* summed over"
              f" APs; {PRE_KICK}: host clock less the report's time from"
              " the first kick):\n" + phase)
    RESULTS.mkdir(exist_ok=True)
    (BUILD / "bench").mkdir(parents=True, exist_ok=True)
    raw = BUILD / "bench" / f"{suite}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    raw.write_text(json.dumps([asdict(s) for s in samples], indent=1))
    stem = result_stem(suite, variants)
    (RESULTS / f"{stem}.json").write_text(json.dumps(
        {"date": started, "suite": suite, "reps": reps,
         "command": command(suite, reps, variants), "stats": stats,
         "samples": [asdict(s) for s in samples]},
        indent=1))
    png = plot(samples, stats, RESULTS / f"{stem}.png")
    (RESULTS / f"{stem}.md").write_text(
        f"`{command(suite, reps, variants)}` "
        f"({suite}, {reps} boots each, interleaved), {started}, "
        f"on a 2-core Debian 12 machine, QEMU TCG.\n\n{HOST_CLOCK_NOTE}"
        f"\n\n```\n{host}\n```\n\n{GUEST_CLOCK_NOTE}\n\n"
        f"```\n{table}\n```\n"
        f"\n`host busy`: host CPUs kept busy by QEMU's vCPU threads from "
        f"the guest's first to its last bringup line, median (round-robin "
        f"TCG: at most 1.00; below that, every vCPU was idle, waiting, "
        f"part of the time).\n"
        + (f"\n{PAIR_NOTE}\n\n```\n{pairs}\n```\n" if pairs else "")
        + (f"\nWhere our kernel's bringup time goes (medians of its "
           f"`bringup_timing` report, ms; control-CPU phases are wall "
           f"time from the first kick, `ap-*` are summed over the APs; "
           f"`{PRE_KICK}` is the bringup by the host's clock less the "
           f"report's time from the first kick: the PREPARE states of all "
           f"CPUs in parallel mode, of CPU 1 in serial mode):"
           f"\n\n```\n{phase}\n```\n" if phase else ""))
    print(f"lab: bench: raw {raw}, table {RESULTS / (stem + '.md')}"
          + (f", plot {png}" if png else ""))
    failed = sum(s.verdict != "pass" for s in samples)
    return 1 if failed else 0
