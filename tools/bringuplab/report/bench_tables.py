"""The tables and plot of a bench record: medians per kernel and mode,
ratios within each rep, the series' targets and the phase split. Pure
functions of the samples (samples.py, stats.py); nothing here boots."""
import shutil
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from bringuplab.report import columns, stats
from bringuplab.report.samples import Sample
from bringuplab.build.variants import VARIANTS


PRE_KICK = stats.PRE_KICK


def phase_table(samples: List[Sample]) -> str:
    """Median ms per bringup phase of our kernel, per setup and mode."""
    cells, names = stats.phase_medians(samples)
    if not cells:
        return ""
    rows = [[setup, variant] + [
        columns.fmt_ms(cell[n] / 1000.0) if n in cell else "-"
        for n in names]
        for (setup, variant), cell in cells.items()]
    return columns.table(["machine", "kernel/mode"] + names, rows)


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
         ("ours+scaling / ours", "ours+scaling-parallel", "ours-parallel"),
         ("base+scaling / base", "base+scaling-serial", "base-serial"),
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
    return columns.table(["machine", "ratio", "per-rep median", "limit",
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
    return columns.table(["machine", "ratio", "median", "min-max", "pairs"],
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
            row = [setup, var.name, columns.fmt_ms(med),
                   f"{columns.fmt_ms(cell.get(key + 'min'))}-"
                   f"{columns.fmt_ms(cell.get(key + 'max'))}",
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
    return columns.table(head + ([] if key else ["host busy"]), rows)


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
