"""The state of a hung guest, read from QEMU's human monitor (HMP).

A boot that stops printing is killed by the lab; before that, QEMU is
asked over its monitor socket which vCPUs are halted, where each one is
(registers) and what its local APIC holds (timer, pending and in-service
interrupts). A lost timer interrupt and a CPU spinning on a lock look
the same on the console and quite different here.
"""
import re
import socket
import time
from pathlib import Path
from typing import List, Sequence

PROMPT = b"(qemu) "
# HMP edits a line as a terminal would: it echoes what it is sent, one
# character at a time, with cursor movements between.
ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def qemu_args(path: Path) -> List[str]:
    """QEMU options for a monitor on the unix socket `path`, which QEMU
    creates and does not wait on."""
    return ["-monitor", f"unix:{path},server=on,wait=off"]


def commands(cpus: Sequence[int]) -> List[str]:
    """What to ask: run state, every vCPU's registers, the local APIC of
    each of `cpus`, QEMU's CPU indexes (HMP's `info lapic` reads the
    monitor's current CPU)."""
    cmds = ["info status", "info cpus", "info registers -a"]
    for cpu in cpus:
        cmds += [f"cpu {cpu}", "info lapic"]
    return cmds


def _read_prompt(sock: socket.socket, deadline: float) -> bytes:
    """Everything up to the next prompt (or what came before the
    deadline)."""
    data = b""
    while not data.endswith(PROMPT):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
    return data


def dump(path: Path, cpus: Sequence[int], timeout: float = 30.0) -> str:
    """The answers to commands(cpus), as text; a one-line reason instead
    if the monitor cannot be reached."""
    deadline = time.monotonic() + timeout
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(path))
            _read_prompt(sock, deadline)
            out = []
            for cmd in commands(cpus):
                sock.sendall(cmd.encode() + b"\n")
                answer = _read_prompt(sock, deadline)
                text = ESCAPES.sub("", answer.decode(errors="replace"))
                text = text.replace("\r", "")
                if text.endswith(PROMPT.decode()):
                    text = text[:-len(PROMPT)]
                # The first line is the echo, redrawn at each character
                text = text.partition("\n")[2]
                out.append(f"### {cmd}\n{text.rstrip()}\n")
                if time.monotonic() >= deadline:
                    out.append(f"### monitor: stopped after {timeout:.0f} s\n")
                    break
            return "".join(out)
    except OSError as err:
        return f"### monitor: unavailable: {err}\n"
