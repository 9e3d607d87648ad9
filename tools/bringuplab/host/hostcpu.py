"""Host CPU time QEMU's vCPU threads use while the guest brings up its APs.

Under round-robin TCG one host thread runs every vCPU. If that thread is
busy for the whole bringup, the bringup time is emulated guest code
(work, or spinning) and starting more CPUs at once cannot shorten it;
only less guest code can. Idle host time inside the bringup is waiting
(for a timer, an IPI, a sleeping kthread) that a better bringup could
fill. The probe watches the console log as QEMU writes it and reads the
vCPU threads' run time (/proc/PID/task/TID/schedstat, nanoseconds) when
the guest prints the first and the last line of its bringup.
"""
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

from bringuplab.verdict import parse
from bringuplab.errors import InfraError

START = re.compile(parse.START_TEXT.encode())
END = re.compile(parse.END_TEXT.encode())

# QEMU names its threads only when asked to: "ALL CPUs/TCG" (round-robin)
# or "CPU N/TCG" (MTTCG).
QEMU_NAME_ARGS = ["-name", "lab,debug-threads=on"]
VCPU_SUFFIX = "/TCG"


@dataclass
class HostCpu:
    wall_ms: float        # host wall time between the two lines
    vcpu_ms: float        # run time of the vCPU threads, summed

    @property
    def busy(self) -> float:
        """Host CPUs kept busy by the vCPU threads, on average (<= 1.0
        under round-robin TCG)."""
        return self.vcpu_ms / self.wall_ms if self.wall_ms > 0 else 0.0


def vcpu_ns(pid: int) -> Optional[int]:
    """Run time of the process's vCPU threads, or None if it has none
    (exited, or its threads are not named)."""
    total, found = 0, False
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            if VCPU_SUFFIX not in (task / "comm").read_text():
                continue
            total += int((task / "schedstat").read_text().split()[0])
            found = True
        except (OSError, ValueError, IndexError):
            continue
    return total if found else None


class LineScanner:
    """Finds START, then END, in text fed in arbitrary chunks."""

    def __init__(self) -> None:
        self._pending = b""
        self.seen_start = False
        self.seen_end = False

    def feed(self, chunk: bytes) -> List[str]:
        """Return the events ("start", "end") completed by this chunk."""
        events: List[str] = []
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        for line in lines:
            if not self.seen_start and START.search(line):
                self.seen_start = True
                events.append("start")
            elif self.seen_start and not self.seen_end and END.search(line):
                self.seen_end = True
                events.append("end")
        return events


class Probe(threading.Thread):
    """Polls the log every `period` seconds until both lines are seen or
    stop() is called; `result` is then set if both were seen."""

    def __init__(self, pid: int, log: Path, period: float = 0.002) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.log = log
        self.period = period
        self.result: Optional[HostCpu] = None
        self._quit = threading.Event()

    def stop(self) -> None:
        self._quit.set()
        self.join()

    def run(self) -> None:
        scanner = LineScanner()
        start: Optional[Tuple[float, int]] = None
        with self.log.open("rb") as logf:
            while not scanner.seen_end:
                chunk = logf.read()
                if not chunk:
                    if self._quit.wait(self.period):
                        return
                    continue
                for event in scanner.feed(chunk):
                    now, used = time.monotonic(), vcpu_ns(self.pid)
                    if used is None:
                        return
                    if event == "start":
                        start = (now, used)
                    elif start is not None:
                        self.result = HostCpu((now - start[0]) * 1000.0,
                                              (used - start[1]) / 1e6)


def require(verdict: str, wall_ms: Optional[float], log: str) -> None:
    """A boot that passed must have been timed by the host's clock, the
    clock a benchmark reports: without it its rows would silently drop
    out of the tables. InfraError if the probe found nothing."""
    if verdict == "pass" and wall_ms is None:
        raise InfraError(
            "the host-CPU probe measured nothing in a boot that passed "
            f"(log {log}): QEMU's vCPU threads ('{VCPU_SUFFIX}') were not "
            "found under /proc, or the bringup lines not seen in time; "
            "no host-clock figure can be given")
