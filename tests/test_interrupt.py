"""Ctrl-C under --jobs ends the QEMU processes in flight at once and
starts no more (it used to wait for boots whose timeouts are 15-30 min);
so does SIGTERM, which a CI runner sends when its time is up.
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"

# Boots six machines two at a time; each "QEMU" notes its pid and sleeps.
SCRIPT = """
import sys
from pathlib import Path
sys.path.insert(0, {tools!r})
from bringuplab.build import kernel
from bringuplab.guest import boot, machine
from bringuplab.guest.machinespec import MachineSpec
from bringuplab.runs import matrix
tmp = Path({tmp!r})
boot.LOGS = tmp / "logs"
kern = kernel.of_image(tmp / "bzImage")
kern.image.write_text("")
pids = tmp / "pids"

def fake_qemu(self, kernel, initrd, cmdline, monitor=None):
    return ["sh", "-c", f"echo $$ >> {{pids}}; exec sleep 300"]

machine.Machine.qemu_argv = fake_qemu
boot.kernel_nr_cpus = lambda kernel: 512
todo = [matrix.Entry(f"e{{i}}", MachineSpec(1)) for i in range(6)]
try:
    with boot.interruptible():
        matrix.run_entries(todo, kern, None, False, jobs=2)
except boot.Stopped as err:
    sys.exit(128 + err.signum)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_kills_boots_in_flight_and_starts_no_more(tmp_path,
                                                             signum):
    pids = tmp_path / "pids"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT.format(
        tools=str(TOOLS), tmp=str(tmp_path))], stderr=subprocess.PIPE)
    started: list = []
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(started) < 2:
            time.sleep(0.1)
            if pids.exists():
                started = [int(p) for p in pids.read_text().split()]
        assert len(started) == 2, "the two first boots did not start"
        time.sleep(0.5)
        # To the lab alone, as `kill` or a CI runner sends it: the QEMU
        # processes do not get it from a terminal.
        os.kill(proc.pid, signum)
        code = proc.wait(timeout=15)
        assert code == 128 + signum, \
            proc.stderr.read() if proc.stderr else ""
        time.sleep(0.2)
        assert not [p for p in started if alive(p)]
        assert len(pids.read_text().split()) == 2, "boots started after"
    finally:
        if proc.poll() is None:
            proc.kill()
        if pids.exists():
            for pid in pids.read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
