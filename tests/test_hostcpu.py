"""The host-CPU probe: line scanning, and a real process measured."""
import subprocess
import sys
from pathlib import Path

from bringuplab.host import hostcpu

START = b"[    1.2] smp: Bringing up secondary CPUs ...\n"
END = b"[    2.3] smp: Brought up 2 nodes, 64 CPUs\n"


def test_scanner_finds_lines_split_across_chunks():
    scan = hostcpu.LineScanner()
    assert scan.feed(START[:20]) == []
    assert scan.feed(START[20:] + b"noise\n" + END[:10]) == ["start"]
    assert scan.feed(END[10:]) == ["end"]
    assert scan.feed(START + END) == []


def test_scanner_ignores_an_end_before_the_start():
    scan = hostcpu.LineScanner()
    assert scan.feed(END) == []
    assert scan.feed(START + END) == ["start", "end"]


def test_busy_is_a_ratio_and_never_divides_by_zero():
    assert hostcpu.HostCpu(200.0, 150.0).busy == 0.75
    assert hostcpu.HostCpu(0.0, 5.0).busy == 0.0


# A stand-in for QEMU: names its thread like a vCPU thread (or not), burns
# CPU between the two lines, then waits for its stdin to close.
CHILD = r"""
import sys, time
if sys.argv[2] == "named":
    open("/proc/self/comm", "w").write("ALL CPUs/TCG")
log = open(sys.argv[1], "ab", buffering=0)
log.write(b"[ 1.0] smp: Bringing up secondary CPUs ...\n")
t0 = time.process_time()
while time.process_time() - t0 < 0.15:
    pass
log.write(b"[ 2.0] smp: Brought up 1 node, 4 CPUs\n")
sys.stdin.read()
"""


def measure(tmp_path: Path, naming: str) -> hostcpu.Probe:
    log = tmp_path / "console.log"
    log.write_bytes(b"# qemu ...\n")
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(log),
                              naming], stdin=subprocess.PIPE)
    probe = hostcpu.Probe(child.pid, log, period=0.001)
    probe.start()
    try:
        # The probe ends on its own once it has measured, or has found
        # no vCPU thread to measure, while the child still runs.
        probe.join(timeout=60)
        assert not probe.is_alive()
    finally:
        child.stdin.close()
        child.wait()
        probe.stop()
    return probe


def test_probe_measures_the_vcpu_thread_between_the_lines(tmp_path):
    res = measure(tmp_path, "named").result
    assert res is not None
    assert res.vcpu_ms >= 100
    assert res.vcpu_ms <= res.wall_ms + 5


def test_probe_gives_nothing_without_named_vcpu_threads(tmp_path):
    assert measure(tmp_path, "unnamed").result is None
