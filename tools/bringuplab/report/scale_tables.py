"""The scale suite's tables and plot (`bench --suite scale`): how a
bringup's cost per AP grows with the machine, per kernel and mode.

The cost per AP of a boot is its bringup window by the host's clock
over its APs (N - 1). Flat means the serialized work per AP does not
depend on N; the fitted slope is the exponent b of cost ~ N^b (least
squares over the sizes' medians, log-log): 0 flat, 1 a per-AP cost
that grows linearly with N (a bringup quadratic in N). Nothing here
boots."""
import math
import shutil
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from bringuplab.report import columns, stats
from bringuplab.report.samples import Sample

# v3 with every split-out series (what the suite boots now), else v3
# without the scaling series (what older records of the suite hold):
# the first of these a record has is the "ours" its claims judge
OURS_CHOICES = ("ours+calibration+workqueue+scaling-parallel",
                "ours+calibration+workqueue-parallel")
OURS = OURS_CHOICES[0]
UPSTREAM = "upstream-parallel"
# The claims of the scale suite: ours parallel's cost per AP at the
# largest size at most GROWTH_LIMIT x its cost at the smallest, and at
# every size at most UPSTREAM_LIMIT x upstream's (per-rep ratios)
GROWTH_LIMIT = 1.1
UPSTREAM_LIMIT = 0.8


@dataclass(frozen=True)
class Point:
    """One kernel/mode on one machine size: medians of its passing boots
    by the host's clock."""
    variant: str
    cpus: int
    setup: str
    boots: int
    failed: int
    window_ms: Optional[float]
    init_ms: Optional[float]

    @property
    def cost_us(self) -> Optional[float]:
        """The bringup window per AP, microseconds."""
        if self.window_ms is None or self.cpus < 2:
            return None
        return self.window_ms * 1000.0 / (self.cpus - 1)


def points(samples: Sequence[Sample]) -> List[Point]:
    """A point per variant and size, variants in the samples' order and
    sizes ascending."""
    groups: Dict[Tuple[str, int], List[Sample]] = {}
    for smp in samples:
        groups.setdefault((smp.variant, smp.cpus), []).append(smp)
    order = list(dict.fromkeys(s.variant for s in samples))
    out = []
    for (variant, cpus), boots in sorted(
            groups.items(), key=lambda kv: (order.index(kv[0][0]),
                                            kv[0][1])):
        good = [s for s in boots if s.verdict == "pass"]
        out.append(Point(
            variant, cpus, boots[0].setup, len(good), len(boots) - len(good),
            stats.median([s.host_wall_ms for s in good
                          if s.host_wall_ms is not None]),
            stats.median([s.host_init_ms for s in good
                          if s.host_init_ms is not None])))
    return out


def slope(pts: Sequence[Point]) -> Optional[float]:
    """The exponent b of cost ~ N^b fitted to the points (least squares
    on log N, log cost); None below two sizes with a cost."""
    xy = [(math.log(p.cpus), math.log(p.cost_us)) for p in pts
          if p.cost_us]
    if len({x for x, _ in xy}) < 2:
        return None
    mx = statistics.fmean(x for x, _ in xy)
    my = statistics.fmean(y for _, y in xy)
    return (sum((x - mx) * (y - my) for x, y in xy)
            / sum((x - mx) ** 2 for x, _ in xy))


def _by_variant(pts: Sequence[Point]) -> Dict[str, List[Point]]:
    out: Dict[str, List[Point]] = {}
    for pnt in pts:
        out.setdefault(pnt.variant, []).append(pnt)
    return out


def _ratio_text(samples: Sequence[Sample], setup: str, num: str,
                den: str) -> str:
    ratios = stats.rep_ratios(list(samples), setup, num, den)
    return f"{statistics.median(ratios):.2f}" if ratios else "-"


def table(samples: Sequence[Sample]) -> str:
    """Per kernel/mode and size: boots, window, cost per AP, growth from
    the smallest size, against upstream in the same reps, PID 1."""
    rows = []
    for variant, pts in _by_variant(points(samples)).items():
        first = next((p.cost_us for p in pts if p.cost_us), None)
        for pnt in pts:
            cost = pnt.cost_us
            rows.append([
                variant, str(pnt.cpus),
                f"{pnt.boots}" + (f" ({pnt.failed} failed)"
                                  if pnt.failed else ""),
                columns.fmt_ms(pnt.window_ms),
                "-" if cost is None else f"{cost:.0f}",
                f"{cost / first:.2f}" if cost and first else "-",
                _ratio_text(samples, pnt.setup, variant, UPSTREAM),
                "-" if pnt.init_ms is None else f"{pnt.init_ms / 1000:.1f}"])
    return columns.table(["kernel/mode", "vCPUs", "boots", "window ms",
                          "us per AP", "x own smallest", "x upstream par",
                          "PID 1 s"], rows)


def slope_table(samples: Sequence[Sample]) -> str:
    rows = []
    for variant, pts in _by_variant(points(samples)).items():
        fit = slope(pts)
        sizes = [p.cpus for p in pts if p.cost_us]
        rows.append([variant, "-" if fit is None else f"{fit:+.2f}",
                     f"{min(sizes)}-{max(sizes)}" if sizes else "-"])
    return columns.table(["kernel/mode", "slope b (cost ~ N^b)", "sizes"],
                         rows)


def ours_variant(samples: Sequence[Sample]) -> str:
    """The variant the claims judge: the first of OURS_CHOICES the
    samples hold (OURS if none)."""
    held = {smp.variant for smp in samples}
    return next((name for name in OURS_CHOICES if name in held), OURS)


def target_rows(samples: Sequence[Sample]) -> List[List[str]]:
    """Ours parallel's growth from the smallest to the largest size, and
    its per-rep ratio to upstream parallel at each size."""
    ours = ours_variant(samples)
    mine = [p for p in points(samples) if p.variant == ours and p.cost_us]
    rows = []
    if len(mine) >= 2:
        growth = mine[-1].cost_us / mine[0].cost_us   # type: ignore
        rows.append([f"cost per AP at {mine[-1].cpus} / at {mine[0].cpus}",
                     f"{growth:.2f}", f"{GROWTH_LIMIT:.2f}",
                     "met" if growth <= GROWTH_LIMIT else "missed"])
    for pnt in mine:
        ratios = stats.rep_ratios(list(samples), pnt.setup, ours, UPSTREAM)
        if not ratios:
            continue
        med = statistics.median(ratios)
        rows.append([f"{pnt.cpus} vCPUs: ours par / upstream par",
                     f"{med:.2f}", f"{UPSTREAM_LIMIT:.2f}",
                     "met" if med <= UPSTREAM_LIMIT else "missed"])
    return rows


NOTE = (
    "Round-robin TCG, Intel, 2 sockets; by the host's clock. `us per "
    "AP`: the bringup window (the guest's first to last bringup line) "
    "over the N - 1 APs, median of the boots; `x own smallest`: that "
    "against the same kernel/mode at the smallest size (1.00 = flat); "
    "`x upstream par`: per-rep median of the window against upstream's "
    "parallel bringup on the same machine; `PID 1 s`: QEMU's start to "
    "the kernel starting /init. The slope b fits cost per AP ~ N^b over "
    "the sizes (0: flat; 1: a bringup quadratic in N).")


def section(samples: Sequence[Sample]) -> str:
    """The markdown of a scale record's own part."""
    fence = "```\n{}\n```".format
    text = (f"## Cost per AP against the machine's size\n\n{NOTE}\n\n"
            + fence(table(samples)) + "\n\n" + fence(slope_table(samples)))
    rows = target_rows(samples)
    if rows:
        text += ("\n\n## The scale targets\n\n" + fence(columns.table(
            ["claim", "value", "limit", "target"], rows)))
    return text


def plot(samples: Sequence[Sample], png: Path) -> Optional[Path]:
    """Cost per AP against vCPUs, log-log, one line per kernel/mode."""
    if not shutil.which("gnuplot"):
        return None
    series = {variant: [(p.cpus, p.cost_us) for p in pts if p.cost_us]
              for variant, pts in _by_variant(points(samples)).items()}
    series = {k: v for k, v in series.items() if v}
    if not series:
        return None
    data = png.with_suffix(".dat")
    data.write_text("\n\n\n".join(
        f"# {name}\n" + "\n".join(f"{n} {us:.3f}" for n, us in pts)
        for name, pts in series.items()) + "\n")
    plots = ", ".join(f"'{data}' index {i} with linespoints title '{name}'"
                      for i, name in enumerate(series))
    script = (f"set terminal png size 1000,650\nset output '{png}'\n"
              "set xlabel 'vCPUs'\nset ylabel 'bringup us per AP (median)'\n"
              "set logscale xy\nset key outside right\n"
              "set title 'bringup window / (N - 1), host clock'\n"
              f"plot {plots}\n")
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return png
