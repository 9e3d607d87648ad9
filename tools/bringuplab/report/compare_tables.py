"""The table of a compare record (compare.py): each arm against the
first, by the host's clock, and the per-phase medians. Nothing here
boots."""
import statistics
from typing import List

from bringuplab.report import bench_tables, columns, stats
from bringuplab.report.samples import Sample


def post_bringup(samples: List[Sample], name: str) -> str:
    """Median and range of an arm's passing boots' post_bringup_ms (the
    guest's initcalls after the bringup, parse.CLOCKSOURCE_SWITCH)."""
    values = [s.post_bringup_ms for s in samples
              if s.variant == name and s.verdict == "pass"
              and s.post_bringup_ms is not None]
    if not values:
        return "-"
    return (f"{columns.fmt_ms(statistics.median(values))} "
            f"({columns.fmt_ms(min(values))}-{columns.fmt_ms(max(values))})")


def ratio_rows(samples: List[Sample], names: List[str]
               ) -> List[List[str]]:
    """Each arm against the first: ratio of medians and the median (and
    range) of the ratios within a rep, by the host's clock; then the
    guest's time after the bringup."""
    setup = samples[0].setup if samples else ""
    cells = stats.medians(samples).get(setup, {})
    first = cells.get(names[0], {}).get("host_median")
    rows = []
    for name in names:
        cell = cells.get(name, {})
        med = cell.get("host_median")
        ratios = stats.rep_ratios(samples, setup, name, names[0])
        rows.append([
            name, columns.fmt_ms(med),
            f"{columns.fmt_ms(cell.get('host_min'))}-"
            f"{columns.fmt_ms(cell.get('host_max'))}" if med else "-",
            f"{cell.get('host_n', 0)}" + (f" ({cell['failed']} failed)"
                                          if cell.get("failed") else ""),
            f"{med / first:.2f}" if med and first else "-",
            "{} ({})".format(*bench_tables.fmt_ratios(ratios)) if ratios
            else "-", post_bringup(samples, name)])
    return rows


def render(samples: List[Sample], names: List[str]) -> str:
    """The host-clock table, then the per-phase medians."""
    text = columns.table(
        ["arm", "median ms", "min-max", "boots", f"x {names[0]}",
         "per rep x (range)", "after ms (range)"],
        ratio_rows(samples, names))
    phase = bench_tables.phase_table(samples)
    text += ("\n\nafter ms: guest time from the end of the bringup to "
             "the first clocksource switch, initcalls of the boot CPU "
             "while the APs idle with a periodic tick")
    return text + ("\n\nper-phase medians, ms (bringup_timing; ap-* "
                   f"summed over APs; {bench_tables.PRE_KICK}: host clock "
                   "less the report's time from the first kick):\n"
                   + phase
                   if phase else "")
