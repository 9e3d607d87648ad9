"""`[k/N] ... ETA` lines on stderr while a run boots: results go to
stdout, progress never does."""
import sys
import threading
import time
from typing import Any, Callable, Optional, TextIO


def duration(seconds: float) -> str:
    """'45 s', '12 min', '2 h 05 min'."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def say(text: str) -> None:
    """A progress line of the lab, on stderr."""
    print(f"lab: {text}", file=sys.stderr, flush=True)


class Progress:
    """Counts finished steps of a known total; each one prints
    `[k/N] LABEL: WHAT, ETA ...` (the mean time per step so far times
    the steps left), the last one `..., done in ...`. Thread-safe."""

    def __init__(self, total: int, label: str,
                 stream: Optional[TextIO] = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.label = label
        self.stream = stream
        self.clock = clock
        self.count = 0
        self.started = clock()
        self._lock = threading.Lock()

    def line(self, what: str) -> str:
        """Count one step done; the line that says so."""
        with self._lock:
            self.count += 1
            count = self.count
            elapsed = self.clock() - self.started
        head = f"[{count}/{self.total}] {self.label}: {what}"
        if count >= self.total:
            return f"{head}, done in {duration(elapsed)}"
        left = elapsed / count * (self.total - count)
        return f"{head}, ETA {duration(left)}"

    def done(self, what: str) -> None:
        print(self.line(what), file=self.stream or sys.stderr, flush=True)


def of_boots(total: int, label: str) -> Callable[[Any], None]:
    """A `done` callback for matrix.run and run_entries: a [k/N] line
    naming each boot (a matrix.Row) as it is judged."""
    steps = Progress(total, label)
    return lambda row: steps.done(row.entry.name)
