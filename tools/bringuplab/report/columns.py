"""Plain-text tables for results."""
from typing import List, Sequence


def table(headers: Sequence[str], rows: List[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers]] + \
        [["-" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
             for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def fmt_ms(value: object) -> str:
    return "-" if value is None else f"{float(value):.1f}"
