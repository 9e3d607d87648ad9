"""The table of a demo record (demo.py). Nothing here boots."""
from typing import List

from bringuplab.report import columns


HEAD = ["kernel command line", "mode", "CPUs online", "bringup ms",
        "verdict"]


def table(boots: List[dict]) -> str:
    """The demo's table, from its record's boots."""
    return columns.table(HEAD, [
        [b["cmdline"], b["mode"] or "serial (no mode line: base kernel)",
         b["cpus"], columns.fmt_ms(b["bringup_ms"]), b["verdict"]]
        for b in boots])
