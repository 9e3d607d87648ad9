"""The host's clock at a line of the console: how long after QEMU
started the guest printed it (e.g. systemd's "Reached target
Multi-User System"). Like hostcpu.Probe, it reads the console log as
QEMU writes it; it times, it does not synchronize anything."""
import re
import threading
import time
from pathlib import Path
from typing import Optional

# systemd's status line on the console, colour codes between the words
MULTI_USER = rb"Reached target .*Multi-User System"


class LineMatcher:
    """Finds the first whole line matching a pattern in text fed in
    arbitrary chunks."""

    def __init__(self, pattern: bytes) -> None:
        self.pattern = re.compile(pattern)
        self._pending = b""
        self.seen = False

    def feed(self, chunk: bytes) -> bool:
        """True once a line completed by this chunk (or before) matched."""
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()
        if not self.seen:
            self.seen = any(self.pattern.search(line) for line in lines)
        return self.seen


class Milestone(threading.Thread):
    """Polls the log every `period` seconds until a line matches or
    stop() is called; `ms` is then the time from `since` (a
    time.monotonic() taken when QEMU was started) to the line."""

    def __init__(self, log: Path, pattern: bytes, since: float,
                 period: float = 0.005) -> None:
        super().__init__(daemon=True)
        self.log = log
        self.since = since
        self.period = period
        self.matcher = LineMatcher(pattern)
        self.ms: Optional[float] = None
        self._quit = threading.Event()

    def stop(self) -> None:
        self._quit.set()
        self.join()

    def run(self) -> None:
        with self.log.open("rb") as logf:
            while True:
                chunk = logf.read()
                if not chunk:
                    if self._quit.wait(self.period):
                        return
                    continue
                if self.matcher.feed(chunk):
                    self.ms = round((time.monotonic() - self.since) * 1000.0,
                                    1)
                    return
