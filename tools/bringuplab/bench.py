"""`make bench`: our series against upstream 6.12, side by side.

Boots are interleaved (A B C D A B C D ...) so that drift of this noisy
machine hits every kernel and mode alike; results are medians.
"""
import shutil
import statistics
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import boot, hostcpu, initramfs, kernel, record, report, stats, \
    tree, upstream, worktree
from .machinespec import SERVER, MachineSpec
from .errors import UsageError
from .paths import BUILD, ROOT
from .progress import Progress, say
from .samples import Sample

# The commit of this repository (tagged series-v1) whose patches/ is the
# first version of the series
V1_REV = "60696f096114a804271fd981cde8a33dd1073113"

# The commit of this repository whose patches/ is the second version of
# the series (before the v3 failure path)
V2_REV = "de6f83828a5701f0f511a0521d504828cae1af35"

# An experiment on top of the series, booted by the halt-* variants, on
# the series as it was written for (patches/ at HALT_SERIES_REV, the
# revision of records/halt-bench-20261203T151613Z.json); the series
# has moved on under it since
HALT_PATCH = ROOT / "experiments" / "v2-ap-halt-while-waiting.patch"
HALT_SERIES_REV = "284d8090eafab88c9dfe41e8ab17839a148b7d94"


@dataclass(frozen=True)
class Variant:
    name: str
    # ours | halt | v1 | upstream | base, or ours/base + split-out
    # series (tree.combination())
    kernel: str
    append: str
    # Booted only when --variants names it
    experiment: bool = False


VARIANTS = [Variant("ours-parallel", "ours", ""),
            Variant("ours-serial", "ours", "cpuhp.parallel=0"),
            # The series plus the experiment in HALT_PATCH: APs halt
            # instead of spinning while they wait for their release.
            Variant("halt-parallel", "halt", "", experiment=True),
            Variant("halt-serial", "halt", "cpuhp.parallel=0",
                    experiment=True),
            # The first version of the series (git tag series-v1), with
            # its per-phase report ("bringup_timing").
            Variant("v1-parallel", "v1", "bringup_timing"),
            Variant("v1-serial", "v1", "bringup_timing cpuhp.parallel=0"),
            # v1 without its start-ahead window (v2 dropped it): every AP
            # started at once, as in v2 and upstream
            # The second version of the series (patches/ at V2_REV)
            Variant("v2-parallel", "v2", "", experiment=True),
            Variant("v2-serial", "v2", "cpuhp.parallel=0", experiment=True),
            Variant("v1-nowindow", "v1",
                    "bringup_timing cpuhp.parallel_window=4096"),
            # The same two without any TSC test at bringup (tsc=reliable:
            # every AP skips it, in v1 also the all-CPU test v2 dropped),
            # so that what v1's test costs comes apart from the rest
            Variant("ours-tscreliable", "ours", "tsc=reliable",
                    experiment=True),
            Variant("v1-nowindow-tscreliable", "v1",
                    "bringup_timing cpuhp.parallel_window=4096 "
                    "tsc=reliable", experiment=True),
            Variant("upstream-parallel", "upstream", ""),
            Variant("upstream-serial", "upstream", "cpuhp.parallel=0"),
            # The kernel the series applies to: what an operator runs today.
            Variant("base-serial", "base", ""),
            # The split-out series (patches/<name>/), each on top of the
            # main series and on the base alone
            Variant("ours+calibration-parallel", "ours+calibration", "",
                    experiment=True),
            Variant("ours+workqueue-parallel", "ours+workqueue", "",
                    experiment=True),
            # v3 as sent: the main series and both split-out series
            Variant("ours+calibration+workqueue-parallel",
                    "ours+calibration+workqueue", "", experiment=True),
            Variant("ours+calibration+workqueue-serial",
                    "ours+calibration+workqueue", "cpuhp.parallel=0",
                    experiment=True),
            Variant("base+calibration-serial", "base+calibration", "",
                    experiment=True),
            Variant("base+workqueue-serial", "base+workqueue", "",
                    experiment=True)]


# The variants a suite boots without --variants; every one otherwise.
# The targets need the series in both modes, v1, upstream and the base
# in the mode they ship in.
SUITE_VARIANTS: Dict[str, Tuple[str, ...]] = {
    "targets": ("ours+calibration+workqueue-parallel",
                "ours+calibration+workqueue-serial", "ours-parallel",
                "upstream-parallel", "base-serial"),
    "extras": ("ours-parallel", "ours+calibration-parallel",
               "ours+workqueue-parallel", "base-serial",
               "base+calibration-serial", "base+workqueue-serial")}


def default_variants(suite: str) -> List[Variant]:
    names = SUITE_VARIANTS.get(suite)
    if names is None:
        return [var for var in VARIANTS if not var.experiment]
    return [var for var in VARIANTS if var.name in names]


def pick_variants(names: Optional[str], suite: str = "quick"
                  ) -> List[Variant]:
    """The variants a comma list names, in the order of VARIANTS; the
    suite's default ones for None. Fewer variants mean more reps in the
    same time for the ratios that matter."""
    if names is None:
        return default_variants(suite)
    wanted = {name.strip() for name in names.split(",") if name.strip()}
    known = {var.name for var in VARIANTS}
    unknown = sorted(wanted - known)
    if unknown:
        raise UsageError(f"unknown variant '{unknown[0]}' (known: "
                         f"{', '.join(var.name for var in VARIANTS)})")
    if not wanted:
        raise UsageError("--variants names no variant")
    return [var for var in VARIANTS if var.name in wanted]


def _server(cpus: int, tcg: str, profile: str) -> MachineSpec:
    """2 sockets, SMT 2, 2 NUMA nodes."""
    return MachineSpec(cpus, f"2x{cpus // 4}x2", 2, profile, tcg=tcg)


SUITES: Dict[str, List[MachineSpec]] = {
    "quick": [_server(64, "single", "intel"), _server(32, "multi", "intel"),
              _server(32, "single", "amd")],
    "full": [_server(n, tcg, prof) for prof in ("intel", "amd")
             for tcg in ("single", "multi") for n in (8, 16, 32, 64)]
    + [MachineSpec(64, "64x1x1")],
    # The round-robin target machine alone, for many boots per cell: its
    # ratio moves with this host's emulation speed (docs/benchmark.md).
    "rr64": [SERVER],
    # The two machines the series' targets are stated for: round-robin
    # 64 vCPUs (against upstream's parallel bringup) and multi-threaded
    # 32 vCPUs (parallel against serial).
    "targets": [SERVER, _server(32, "multi", "intel")],
    # What each split-out series is worth: the round-robin server, one
    # package per vCPU (each AP the first of its package, which the
    # calibration series is about) and AMD vCPUs without a constant TSC.
    "extras": [SERVER, MachineSpec(64, "64x1x1"),
               _server(32, "single", "amd")],
}


def check_suite(suite: str) -> None:
    if suite not in SUITES:
        raise UsageError(f"unknown suite '{suite}' (known: "
                         f"{', '.join(SUITES)})")


# Earlier versions of the series, by kernel name: patches/ at that commit
OLD_SERIES = {"v1": V1_REV, "v2": V2_REV}


def _build(which: str) -> kernel.Kernel:
    """One of the kernels a variant names, built."""
    if which == "ours":
        return kernel.build("guest")
    if which == "upstream":
        return upstream.build()
    if which == "halt":
        halt_tree = worktree.fresh(BUILD / "halt" / "linux", "base")
        tree.apply_series(tree.series_at(HALT_SERIES_REV) + [HALT_PATCH],
                          halt_tree)
        return kernel.build("guest", halt_tree,
                            BUILD / "halt" / "out-guest", tag="-halt")
    if "+" in which:
        combo_tree = worktree.fresh(BUILD / "combo" / which / "linux", "base")
        tree.apply_series(tree.combination(which), combo_tree)
        return kernel.build("guest", combo_tree,
                            BUILD / "combo" / which / "out-guest",
                            tag=f"-{which}")
    if which in OLD_SERIES:
        old_tree = worktree.fresh(BUILD / which / "linux", "base")
        tree.apply_series(tree.series_at(OLD_SERIES[which]), old_tree)
        return kernel.build("guest", old_tree, BUILD / which / "out-guest",
                            tag=f"-{which}")
    base_tree = worktree.fresh(BUILD / "bench" / "base-linux", "base")
    return kernel.build("guest", base_tree, BUILD / "bench" / "out-base-guest",
                        tag="-base")


def run_suite(suite: str, reps: int,
              variants: Optional[List[Variant]] = None) -> List[Sample]:
    """Boot every variant on every machine of the suite, `reps` times,
    interleaved. InfraError if a passing boot went untimed by the host's
    clock (hostcpu.require): its rows would drop out of the tables."""
    check_suite(suite)
    variants = default_variants(suite) if variants is None else variants
    say("bench: " + tree.create())
    kernels = {which: _build(which)
               for which in dict.fromkeys(var.kernel for var in variants)}
    initrd = initramfs.build()
    samples: List[Sample] = []
    steps = Progress(reps * len(SUITES[suite]) * len(variants), "bench")
    for rep in range(1, reps + 1):
        for setup in SUITES[suite]:
            mach = setup.make()
            for var in variants:
                spec = boot.BootSpec(mach, kernels[var.kernel].image, initrd,
                                     var.append, ["cpus"],
                                     label=f"bench-{var.name}-{setup.cpus}",
                                     host_cpu=True)
                res = boot.run(spec, quiet=True)
                hostcpu.require(res.verdict, res.host_wall_ms, res.log)
                samples.append(Sample(setup.name, setup.cpus, setup.tcg,
                                      setup.profile, var.name, rep,
                                      res.verdict, res.bringup_ms, res.mode,
                                      res.log, dict(res.phases_us),
                                      res.host_wall_ms, res.host_vcpu_ms,
                                      res.kick_total_us,
                                      res.post_bringup_ms))
                steps.done(f"{setup.name} {var.name} rep {rep}: "
                           f"{res.verdict}, {res.host_wall_ms or '-'} ms "
                           f"by the host, log {res.log}")
    return samples


PRE_KICK = stats.PRE_KICK


def phase_table(samples: List[Sample]) -> str:
    """Median ms per bringup phase of our kernel, per setup and mode."""
    cells, names = stats.phase_medians(samples)
    if not cells:
        return ""
    rows = [[setup, variant] + [
        report.fmt_ms(cell[n] / 1000.0) if n in cell else "-"
        for n in names]
        for (setup, variant), cell in cells.items()]
    return report.table(["machine", "kernel/mode"] + names, rows)


# The ratios pair_table() follows: (name, numerator, denominator).
PAIRS = [("ours par / ours serial", "ours-parallel", "ours-serial"),
         ("ours par / upstream par", "ours-parallel", "upstream-parallel"),
         ("upstream par / upstream serial", "upstream-parallel",
          "upstream-serial"),
         ("ours par / v1 par", "ours-parallel", "v1-parallel"),
         ("ours par / base", "ours-parallel", "base-serial"),
         ("v1 no window / v1 par", "v1-nowindow", "v1-parallel"),
         ("ours no TSC test / ours par", "ours-tscreliable",
          "ours-parallel"),
         ("v1 no window, no TSC test / v1 no window",
          "v1-nowindow-tscreliable", "v1-nowindow"),
         ("ours no TSC test / v1 no window, no TSC test",
          "ours-tscreliable", "v1-nowindow-tscreliable"),
         ("halt par / halt serial", "halt-parallel", "halt-serial"),
         ("halt par / ours par", "halt-parallel", "ours-parallel"),
         ("ours+calibration / ours", "ours+calibration-parallel",
          "ours-parallel"),
         ("ours+workqueue / ours", "ours+workqueue-parallel",
          "ours-parallel"),
         ("base+calibration / base", "base+calibration-serial",
          "base-serial"),
         ("base+workqueue / base", "base+workqueue-serial", "base-serial"),
         # v3 as sent: the main series with both split-out series, the
         # counterpart of upstream 6.12, which has its own CPU 0
         # calibration reuse
         ("v3 par / upstream par", "ours+calibration+workqueue-parallel",
          "upstream-parallel"),
         ("v3 par / v3 serial", "ours+calibration+workqueue-parallel",
          "ours+calibration+workqueue-serial"),
         ("v3 par / v2 par", "ours+calibration+workqueue-parallel",
          "v2-parallel")]


@dataclass(frozen=True)
class Target:
    """A claim of the series: on machines of `cpus` vCPUs and TCG mode
    `tcg`, the per-rep median of the ratio `pair` is at most `limit`."""
    cpus: int
    tcg: str
    pair: str
    limit: float


# The targets of series v3, for v3 as sent (PAIRS). A parallel bringup
# slower than the serial one with more vCPU threads than host cores is a
# limit (docs/limits.md), not a target.
TARGETS = [Target(64, "single", "v3 par / upstream par", 0.8),
           Target(32, "multi", "v3 par / upstream par", 1.0)]


def target_rows(samples: List[Sample]) -> List[List[str]]:
    """One row per target and machine it applies to: the per-rep median
    ratio, the limit and whether it holds; no row without a pair."""
    pairs = {name: (num, den) for name, num, den in PAIRS}
    rows = []
    for tgt in TARGETS:
        for setup in dict.fromkeys(s.setup for s in samples
                                   if s.cpus == tgt.cpus
                                   and s.tcg == tgt.tcg):
            ratios = stats.rep_ratios(samples, setup, *pairs[tgt.pair])
            if not ratios:
                continue
            med = statistics.median(ratios)
            rows.append([setup, tgt.pair, f"{med:.2f}", f"{tgt.limit:.2f}",
                         str(len(ratios)),
                         "met" if med <= tgt.limit else "missed"])
    return rows


def target_table(samples: List[Sample]) -> str:
    rows = target_rows(samples)
    if not rows:
        return ""
    return report.table(["machine", "ratio", "per-rep median", "limit",
                         "pairs", "target"], rows)


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
            ratios = stats.rep_ratios(samples, setup, num, den)
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


def render(cells: Dict[str, Dict[str, dict]], clock: str = "guest"
           ) -> str:
    """The table of medians and ratios, by the guest's printk clock or
    (clock="host") by the host's clock; see HOST_CLOCK_NOTE."""
    key = "" if clock == "guest" else "host_"
    rows = []
    for setup, per in cells.items():
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


def plot(samples: List[Sample], cells: Dict[str, Dict[str, dict]],
         png: Path) -> Optional[Path]:
    """Bringup ms vs vCPUs, one line per kernel/mode, for each TCG mode
    and profile that has more than one machine size."""
    if not shutil.which("gnuplot"):
        return None
    series: Dict[str, Dict[int, float]] = {}
    every = [c for per in cells.values() for c in per.values()]
    stat = ("host_median" if every and all(c.get("host_median") is not None
                                           for c in every) else "median")
    for smp in samples:
        med = cells[smp.setup][smp.variant].get(stat)
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
    subset = variants is not None and variants != default_variants(suite)
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
    if variants is None or variants == default_variants(suite):
        return suite
    return "+".join([suite] + [var.name for var in variants])


def results(suite: str, reps: int, variants: Optional[List[Variant]],
            samples: List[Sample]) -> dict:
    """The results part of a bench record: the samples, and what
    stats.py derives from them."""
    return {"suite": suite, "reps": reps,
            "command": command(suite, reps, variants),
            "variants": [var.name for var in variants
                         or default_variants(suite)],
            "stats": stats.medians(samples),
            "floors": [floor.to_dict() for floor in stats.floors(samples)],
            "samples": [asdict(s) for s in samples]}


def run(suite: str = "quick", reps: int = 3,
        variants: Optional[List[Variant]] = None) -> record.Record:
    """Boot the suite; its record, saved in results/ with the plot."""
    started = record.now()
    samples = run_suite(suite, reps, variants)
    rec = record.make("bench", all(s.verdict == "pass" for s in samples),
                      results(suite, reps, variants, samples), started)
    path = record.save(rec)
    png = plot(samples, stats.medians(samples), path.with_suffix(".png"))
    stem = result_stem(suite, variants)
    say(f"bench: record {path}" + (f", plot {png}" if png else "")
        + f"; to keep it: cp {path} bench/{stem}.json && tools/bringup "
        f"render bench/{stem}.json > bench/{stem}.md")
    return rec
