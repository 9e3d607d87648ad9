"""One boot: QEMU with a timeout, the console saved, the log judged."""
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterator, List, Optional, Set

from bringuplab.build import kconfig
from bringuplab.guest import machine as machmod, milestone, monitor
from bringuplab.host import hostcpu
from bringuplab.verdict import judge, parse
from bringuplab.errors import QemuRefused
from bringuplab.build.kernel import Kernel
from bringuplab.paths import LOGS
from bringuplab.errors import InfraError
from bringuplab.verdict.result import BootResult, of_log

# An RCU stall fails a boot anyway; panicking on it makes the kernel print
# every CPU's backtrace (panic_print=0x40), which shows who held things up,
# and ends the boot at once instead of at the deadline.
BASE_CMDLINE = ("console=ttyS0 panic=-1 printk.time=1 "
                "sysctl.kernel.panic_on_rcu_stall=1 panic_print=0x40")

# A guest that prints nothing for this long is hung: the longest quiet
# stretch of a passing boot in the lab's logs is the 30 s stall that the
# fault injection puts into an AP's startup (fault-rmstall-*); RCU and
# the soft lockup detector report a stuck CPU within 21 s. Without it a
# hang would hold the host until the boot's deadline, 30 minutes for
# the debug kernels.
SILENCE_S = 300.0
# How often the lab looks at the console log while QEMU runs.
POLL_S = 1.0


@dataclass
class BootSpec:
    """Everything that decides one boot; `label` names its log."""
    mach: machmod.Machine
    kernel: Path
    initrd: Optional[Path]
    append: str = ""
    plan: List[str] = field(default_factory=lambda: ["cpus"])
    timeout: float = 0
    label: str = "boot"
    host_cpu: bool = False                # measure QEMU's vCPU threads
    silence: float = SILENCE_S            # quiet seconds that make a hang
    # What the boot must show; None: expectations()'s default.
    expect: Optional[judge.Expect] = None
    # More QEMU options, after the machine's (e.g. a TCG -plugin)
    qemu_extra: List[str] = field(default_factory=list)
    # A console line to time by the host's clock from QEMU's start
    # (milestone.py; result.host_milestone_ms), b"": none
    milestone: bytes = b""

    def cmdline(self) -> str:
        parts = [BASE_CMDLINE, f"lab.plan={','.join(self.plan)}"]
        if self.append:
            parts.append(self.append)
        return " ".join(parts)

    def expectations(self) -> judge.Expect:
        """`expect`, or by default: every vCPU brought up and online,
        every step of the plan passed, the machine's topology."""
        if self.expect:
            return self.expect
        cpus = self.mach.cpus
        return judge.Expect(cpus, cpus, cpus, tuple(self.plan),
                            topologies=tuple(self.mach.linux_topologies()))

    def deadline(self) -> float:
        return self.timeout or 120 + 6 * self.mach.cpus


def kernel_nr_cpus(kern: Kernel) -> int:
    """NR_CPUS of a kernel built by the lab (512 if unknown)."""
    if kern.config.is_file():
        opts = kconfig.parse(kern.config.read_text())
        return int(opts.get("CONFIG_NR_CPUS", "512"))
    return 512


# The QEMU processes running now, for stop_all(); once it ran, no boot
# starts any more in this process.
_LIVE: Set["subprocess.Popen[bytes]"] = set()
_LIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()


def stop_all() -> int:
    """Start no more boots and kill every QEMU running now (Ctrl-C: boots
    in flight under --jobs must not run to their 15-30 min timeouts, nor
    the queued ones start). How many were killed."""
    with _LIVE_LOCK:
        _STOPPING.set()
        procs = list(_LIVE)
    for proc in procs:
        proc.kill()
    return len(procs)


class Stopped(KeyboardInterrupt):
    """The lab was told to stop by `signum`: SIGINT (Ctrl-C) or SIGTERM
    (a CI runner's timeout, `kill`)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within it, SIGINT (Ctrl-C, or kill -INT from a CI runner) and
    SIGTERM (a CI runner's timeout, kill), neither of which reaches
    QEMU, kill every QEMU at once, then raise Stopped, a
    KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, frame: object) -> None:
        stop_all()
        raise Stopped(signum)
    before = {sig: signal.signal(sig, on_signal)
              for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _start(argv: List[str], logf: IO[str]) -> "subprocess.Popen[bytes]":
    """Popen QEMU, registered for stop_all(); KeyboardInterrupt once
    stop_all() ran."""
    with _LIVE_LOCK:
        if _STOPPING.is_set():
            raise KeyboardInterrupt
        try:
            proc = subprocess.Popen(argv, stdout=logf,
                                    stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise InfraError("qemu-system-x86_64 not found: run "
                             "`bringup setup` (apt)") from None
        _LIVE.add(proc)
    return proc


def watch(proc: "subprocess.Popen[bytes]", log: Path, spec: BootSpec
          ) -> str:
    """Wait for QEMU to exit; return why the boot is hung if it does not:
    past its deadline, or silent (the log has not grown) for
    spec.silence seconds. Empty if QEMU exited."""
    started = quiet_since = time.monotonic()
    size = -1
    while True:
        try:
            proc.wait(timeout=POLL_S)
            return ""
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        grown = log.stat().st_size
        if grown != size:
            size, quiet_since = grown, now
        if now - started >= spec.deadline():
            return f"killed at the deadline of {spec.deadline():.0f} s"
        if spec.silence and now - quiet_since >= spec.silence:
            return f"silent for {spec.silence:.0f} s"


def run(spec: BootSpec, quiet: bool = False) -> BootResult:
    """Boot once; return the judged result. The log is always kept."""
    if not spec.kernel.is_file():
        raise InfraError(f"no kernel at {spec.kernel}: run `bringup kernel`")
    LOGS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    log = LOGS / f"{spec.label}-{stamp}-{os.getpid()}.log"
    mondir = Path(tempfile.mkdtemp(prefix="lab-mon-"))
    sock = mondir / "hmp.sock"
    argv = spec.mach.qemu_argv(spec.kernel, spec.initrd, spec.cmdline(),
                               monitor.qemu_args(sock))
    if spec.host_cpu:
        argv += hostcpu.QEMU_NAME_ARGS
    argv += spec.qemu_extra
    probe: Optional[hostcpu.Probe] = None
    mark: Optional[milestone.Milestone] = None
    hang = ""
    started = time.monotonic()
    with log.open("w") as logf:
        logf.write("# " + " ".join(argv) + "\n")
        logf.flush()
        proc = _start(argv, logf)
        if spec.host_cpu:
            probe = hostcpu.Probe(proc.pid, log)
            probe.start()
        if spec.milestone:
            mark = milestone.Milestone(log, spec.milestone, started)
            mark.start()
        try:
            hang = watch(proc, log, spec)
            if hang:
                state = log.with_suffix(".monitor")
                state.write_text(monitor.dump(sock, spec.mach.present()))
                hang += f"; QEMU monitor state in {state}"
                proc.kill()
                proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            with _LIVE_LOCK:
                _LIVE.discard(proc)
            if probe:
                probe.stop()
            if mark:
                mark.stop()
            sock.unlink(missing_ok=True)
            mondir.rmdir()
    if _STOPPING.is_set():
        # Killed by stop_all(): no verdict to give
        raise KeyboardInterrupt
    wall = time.monotonic() - started
    if hang:
        # The log says itself that the lab killed QEMU, for the judge
        # and for `bringup judge` later.
        with log.open("a") as logf:
            logf.write(parse.killed_line(hang))
    result = of_log(log.read_text(errors="replace"), spec.expectations(),
                    str(log))
    if result.verdict == judge.INFRA:
        raise QemuRefused(f"{result.reasons[0]} (log: {log})", str(log))
    if probe and probe.result:
        result.host_wall_ms = round(probe.result.wall_ms, 1)
        result.host_vcpu_ms = round(probe.result.vcpu_ms, 1)
    if mark:
        result.host_milestone_ms = mark.ms
    if not quiet:
        print(f"lab: {spec.label}: {result.verdict} in {wall:.0f} s, "
              f"log {log}", file=sys.stderr)
    return result
