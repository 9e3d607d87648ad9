"""Where the serialized work per AP grows with the machine: two
serialwork records of the same kernels on two machine sizes, set side
by side per phase and per function (`bringup growth SMALL LARGE`).

Instructions per vCPU do not move with this host's load, so a ratio of
two sizes is the growth of the work itself: a phase or function whose
cost per AP is GROWTH_LIMIT times its cost on the small machine or more
does work that grows with N for every AP, a bringup quadratic in N.
A serialwork record keeps the top functions of each phase and folds
the rest into `(other)`: a function the small machine folded has at
most the smallest listed cost there, so its growth is a lower bound
(`>=`). Nothing here boots."""
import statistics
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from bringuplab.errors import UsageError
from bringuplab.report import columns
from bringuplab.report.serialwork_tables import CPU0_OTHER, PARTS, \
    SERIAL, fmt_k, per_ap

# Growth from the small to the large machine that names a phase or a
# function (issue 39: more than 1.5x its cost per AP at 32 vCPUs)
GROWTH_LIMIT = 1.5
# Functions cheaper than this per AP on the large machine, instructions,
# are not named whatever their growth: too small to matter
FLOOR = 500.0
OTHER = "(other)"
# The phases whose functions are set side by side: the serialized ones
# and CPU 0's other tasks (its kthreadd, which works for the control CPU)
PHASES = PARTS + (CPU0_OTHER,)


@dataclass(frozen=True)
class Growth:
    """One phase or function of one kernel/mode: instructions per AP,
    medians over the boots, on the small and the large machine."""
    variant: str
    phase: str
    function: str                  # "" for the whole phase
    small: float
    large: float
    bound: bool = False            # small is an upper bound (folded)

    @property
    def ratio(self) -> Optional[float]:
        return self.large / self.small if self.small else None

    def grows(self, limit: float = GROWTH_LIMIT) -> bool:
        return self.ratio is None or self.ratio > limit

    def ratio_text(self) -> str:
        if self.ratio is None:
            return "new"
        return (">=" if self.bound else "") + f"{self.ratio:.2f}"


def _cpus(results: dict) -> int:
    try:
        return int(results["cpus"])
    except (KeyError, TypeError, ValueError):
        raise UsageError("growth: not a serialwork record (no `cpus`)") \
            from None


def check(small: dict, large: dict) -> List[str]:
    """The kernels/modes both records booted, small machine first;
    UsageError if they are not two sizes of serialwork records."""
    if _cpus(small) >= _cpus(large):
        raise UsageError(f"growth: the first record must be the smaller "
                         f"machine ({_cpus(small)} vCPUs, then "
                         f"{_cpus(large)})")
    configs = [rec.get("config", "guest") for rec in (small, large)]
    if configs[0] != configs[1]:
        raise UsageError(f"growth: the records' kernels were built with "
                         f"different configs ({configs[0]}, then "
                         f"{configs[1]}): run both sizes with the same "
                         f"`serialwork --config`")
    both = [v for v in small.get("variants", [])
            if v in large.get("variants", [])]
    if not both:
        raise UsageError("growth: the records share no kernel/mode")
    return both


def phase_growth(small: dict, large: dict) -> List[Growth]:
    """Every phase of the serialized figure, and CPU 0's other tasks."""
    out = []
    for var in check(small, large):
        for phase in (SERIAL,) + PHASES:
            parts = PARTS if phase == SERIAL else (phase,)
            lo = per_ap(small["samples"], var, *parts)
            hi = per_ap(large["samples"], var, *parts)
            if lo and hi:
                out.append(Growth(var, phase, "", statistics.median(lo),
                                  statistics.median(hi)))
    return out


def _functions(results: dict, variant: str, phase: str
               ) -> Dict[str, float]:
    """Instructions per AP of each listed function of a phase, medians
    over the boots that list it."""
    boots = [s for s in results["samples"] if s["variant"] == variant
             and phase in s.get("functions", {}) and s.get("aps")]
    names = dict.fromkeys(f for s in boots for f in s["functions"][phase])
    return {f: statistics.median(s["functions"][phase][f] / s["aps"]
                                 for s in boots if f in s["functions"][phase])
            for f in names}


def function_growth(small: dict, large: dict, limit: float = GROWTH_LIMIT,
                    floor: float = FLOOR) -> List[Growth]:
    """The functions whose cost per AP grows by more than `limit`, at
    least `floor` instructions per AP on the large machine; the biggest
    added cost first."""
    out = []
    for var in check(small, large):
        for phase in PHASES:
            lo = _functions(small, var, phase)
            hi = _functions(large, var, phase)
            listed = [v for f, v in lo.items() if f != OTHER]
            cut = min(listed) if listed else 0.0
            for func, cost in hi.items():
                if func == OTHER or cost < floor:
                    continue
                grow = Growth(var, phase, func, lo.get(func, cut), cost,
                              func not in lo)
                if grow.grows(limit):
                    out.append(grow)
    return sorted(out, key=lambda g: -(g.large - g.small))


NOTE = (
    "Instructions per AP (k, medians over each record's boots) counted "
    "by the serialwork plugin (docs/serialwork.md) on a small and a "
    "large machine; `x` is large over small. Functions: those of the "
    "serialized phases and of CPU 0's other tasks whose cost per AP "
    "grows more than {limit}x and is at least {floor:.0f} instructions "
    "per AP on the large machine, the biggest added cost first; `>=`: "
    "the small machine folded the function into `(other)`, so its cost "
    "there is at most the smallest one listed.")


def render(small: dict, large: dict, limit: float = GROWTH_LIMIT) -> str:
    """The markdown of `bringup growth`."""
    lo, hi = _cpus(small), _cpus(large)
    rows: List[Sequence[object]] = [
        [g.variant, g.phase, fmt_k(g.small), fmt_k(g.large), g.ratio_text(),
         "grows" if g.grows(limit) else "flat"]
        for g in phase_growth(small, large)]
    text = (f"# Serialized work per AP, {lo} against {hi} vCPUs\n\n"
            f"- small: {small.get('machine', '?')} "
            f"(`{small.get('command', '?')}`)\n"
            f"- large: {large.get('machine', '?')} "
            f"(`{large.get('command', '?')}`)\n\n"
            + NOTE.format(limit=limit, floor=FLOOR) + "\n\n```\n"
            + columns.table(["kernel/mode", "phase", f"at {lo}",
                             f"at {hi}", "x", f"> {limit}x"], rows)
            + "\n```")
    funcs = function_growth(small, large, limit)
    if funcs:
        text += "\n\n## Functions that grow\n\n```\n" + columns.table(
            ["kernel/mode", "phase", "function", f"at {lo}", f"at {hi}",
             "x"],
            [[g.variant, g.phase, g.function, fmt_k(g.small),
              fmt_k(g.large), g.ratio_text()] for g in funcs]) + "\n```"
    else:
        text += f"\n\nNo function grows more than {limit}x."
    return text
