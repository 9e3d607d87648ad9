"""The real console logs of tests/logs, and edits of them for the
judge's tests: each edit breaks one thing a boot showed."""
from pathlib import Path
from typing import Tuple

LOGS = Path(__file__).resolve().parent / "logs"


def load(name: str) -> str:
    return (LOGS / name).read_text()


def replace_first(text: str, old: str, new: str) -> str:
    assert old in text, f"{old!r} not in the log"
    return text.replace(old, new, 1)


def line_of(text: str, start: str) -> str:
    """The first whole line (with its newline) that contains `start`."""
    for line in text.splitlines(keepends=True):
        if start in line:
            return line
    raise AssertionError(f"no line with {start!r}")


def drop_line(text: str, start: str) -> str:
    return text.replace(line_of(text, start), "", 1)


def insert_after(text: str, start: str, new: str) -> str:
    line = line_of(text, start)
    return text.replace(line, line + new, 1)


def rules(verdict: object) -> Tuple[str, ...]:
    return tuple(r.rule for r in getattr(verdict, "reasons"))


def good_1cpu() -> str:
    """good-intel-1cpu.log with the topology check the guest prints
    today: a plain 1-vCPU boot that passes."""
    return load("good-intel-1cpu.log").replace(
        "present_count=1", "present_count=1 offline_stale= topology=ok "
        "packages=1 cores=1 threads=1")
