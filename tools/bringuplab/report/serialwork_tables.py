"""The tables of a serialwork record (serialwork.py): the serialized
instructions per AP against the reference kernels, per phase and per
function, and the names of the profile's buckets and phases they use.
Nothing here boots."""
import statistics
from typing import List, Optional, Sequence, Tuple

from bringuplab.report import columns

# Profile buckets (serialwork.c): role + NROLES * (1 + apart group), the
# group of a call kept apart (CALLS), or role alone
B_FIRST, B_WINDOW, B_AP, B_OTHER, B_UNKNOWN, B_CPU0_OTHER = range(6)


NROLES = 6


MAX_GROUPS = 6


BUCKET_NAMES = {B_FIRST: "control first pass", B_WINDOW: "control windows",
                B_AP: "AP in its window", B_OTHER: "other CPUs",
                B_UNKNOWN: "before GS base",
                B_CPU0_OTHER: "CPU 0 other tasks"}


# The phases of a boot, in table order: the main figure and its parts,
# then what is kept apart
SERIAL = "serialized"


PARTS = ("control first pass", "control windows", "AP in its window")


SPIN = "spin (PAUSE blocks)"


UNKNOWN_PHASE = "AP before GS base"


CPU0_OTHER = "CPU 0 other tasks"


# A phase is stable when its spread over the reps is within this
LIMIT = 0.05


def per_ap(samples: Sequence[dict], variant: str, *phases: str
           ) -> List[float]:
    """The phases' instructions (summed) per AP in each good boot of a
    variant."""
    return [sum(s["phases"][p] for p in phases) / s["aps"] for s in samples
            if s["variant"] == variant and "phases" in s
            and all(p in s["phases"] for p in phases) and s.get("aps")]


def spread(values: Sequence[float]) -> Optional[float]:
    """(max - min) / median, None without values or with a zero
    median."""
    if not values:
        return None
    med = statistics.median(values)
    return (max(values) - min(values)) / med if med else None


def stable(values: Sequence[float], limit: float = LIMIT) -> bool:
    """Within `limit` of each other across the reps (at least two)."""
    sprd = spread(values)
    return len(values) >= 2 and sprd is not None and sprd <= limit


def phase_names(samples: Sequence[dict]) -> List[str]:
    names = [SERIAL, *PARTS]
    for smp in samples:
        for name in smp.get("phases", {}):
            if name not in names:
                names.append(name)
    return names


def fmt_k(value: Optional[float]) -> str:
    return "-" if value is None else f"{value / 1e3:,.1f}"


def phase_table(results: dict) -> str:
    samples = results["samples"]
    limit = results.get("limit", LIMIT)
    rows = []
    for var in results["variants"]:
        for name in phase_names(samples):
            vals = per_ap(samples, var, name)
            if not vals:
                continue
            sprd = spread(vals)
            rows.append([var, name, fmt_k(statistics.median(vals)),
                         f"{fmt_k(min(vals))}-{fmt_k(max(vals))}",
                         "-" if sprd is None else f"{100 * sprd:.1f}%",
                         str(len(vals)),
                         "yes" if stable(vals, limit) else "NO"])
    return columns.table(["kernel/mode", "phase", "k insns per AP (median)",
                         "min-max", "spread", "boots",
                         f"within {100 * limit:.0f}%"], rows)


# The ratios of the main figure the series is judged by
RATIOS = (("upstream-parallel", 0.5), ("v2-parallel", 0.6))


def ratio_table(results: dict, phases: Tuple[str, ...] = (SERIAL,),
                head: str = "serialized k insns per AP") -> str:
    samples = results["samples"]
    med = {var: statistics.median(vals) for var in results["variants"]
           if (vals := per_ap(samples, var, *phases))}
    rows = []
    for var in results["variants"]:
        if var not in med:
            continue
        vals = per_ap(samples, var, *phases)
        sprd = spread(vals)
        row = [var, fmt_k(med[var]),
               "-" if sprd is None else f"{100 * sprd:.1f}%"]
        for ref, _ in RATIOS:
            row.append(f"{med[var] / med[ref]:.2f}" if ref in med
                       and med[ref] else "-")
        rows.append(row)
    heads = [f"x {ref} (target for ours <= {lim})" for ref, lim in RATIOS]
    return columns.table(["kernel/mode", head, "spread", *heads], rows)


def function_table(results: dict, variant: str, bucket: str,
                   top: int = 15) -> str:
    """The biggest functions of a bucket, k instructions per AP (median
    over the boots)."""
    boots = [s for s in results["samples"]
             if s["variant"] == variant and bucket in s.get("functions", {})]
    if not boots:
        return ""
    names = dict.fromkeys(f for s in boots for f in s["functions"][bucket])
    meds = {f: statistics.median(s["functions"][bucket].get(f, 0)
                                 / s["aps"] for s in boots) for f in names}
    total = statistics.median(sum(s["functions"][bucket].values())
                              / s["aps"] for s in boots)
    ranked = sorted(meds.items(), key=lambda kv: -kv[1])[:top]
    rows = [[f, fmt_k(v), f"{100 * v / total:.1f}%" if total else "-"]
            for f, v in ranked]
    return columns.table(["function", "k insns per AP", "share"], rows)


TABLE_NOTE = (
    "Instructions counted by the serialwork TCG plugin per CPU "
    "(docs/serialwork.md), in thousands per AP (totals over the boot / "
    "APs), medians over the boots. `serialized` = `control first pass` "
    "(CPU 0 from bringup_nonboot_cpus to the first CPUHP_BRINGUP_CPU "
    "callback) + `control windows` (CPU 0 from each AP's callback to the "
    "next one or to native_smp_cpus_done) + `AP in its window` (each AP's "
    "own instructions in its window). Kept apart: blocks with a PAUSE "
    "(spin-waits) and the functions of the `apart` list, which count "
    "time, not work; `AP before GS base` is AP code before the CPU is "
    "known (trampoline), any time.")


def render(results: dict) -> str:
    text = (f"{results.get('machine', '?')}, {results.get('reps', '?')} "
            f"boots per kernel, interleaved.\n\n{TABLE_NOTE}\n\n"
            + "```\n" + ratio_table(results) + "\n```\n\n"
            "The same with `CPU 0 other tasks` (mostly kthreadd creating "
            "each AP's per-CPU threads while the control task waits for "
            "it: serial work of CPU 0 too, with some RCU and kworker "
            "noise):\n\n```\n"
            + ratio_table(results, (SERIAL, CPU0_OTHER),
                          "with CPU 0 other tasks") + "\n```\n\n"
            "Per phase (spread = (max - min) / median over the boots):"
            "\n\n```\n" + phase_table(results) + "\n```")
    calls = results.get("calls") or {}
    if calls:
        text += "\n\nCalls kept apart (entry to return, callees " \
            "included): " + "; ".join(
                f"{group}: {', '.join(funcs)} ({kind})"
                for group, (kind, funcs) in calls.items())
    apart = results.get("apart") or {}
    if apart:
        text += "\n\nFunctions kept apart: " + "; ".join(
            f"{group}: {', '.join(funcs)}" for group, funcs in apart.items())
    bad = [f"{s['variant']} rep {s['rep']}: {s.get('error') or s['verdict']}"
           + (f" ({'; '.join(s['problems'])})" if s.get("problems") else "")
           for s in results["samples"]
           if s["verdict"] != "pass" or "phases" not in s
           or s.get("problems")]
    if bad:
        text += "\n\nBoots with problems:\n\n" + "\n".join(
            f"- {b}" for b in bad)
    for var in results["variants"]:
        for bucket in (BUCKET_NAMES[B_WINDOW], BUCKET_NAMES[B_AP],
                       BUCKET_NAMES[B_FIRST], BUCKET_NAMES[B_CPU0_OTHER]):
            table = function_table(results, var, bucket)
            if table:
                text += (f"\n\n### {var}: {bucket}, top functions\n\n"
                         f"```\n{table}\n```")
    return text
