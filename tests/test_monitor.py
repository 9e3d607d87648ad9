"""The hang watchdog and the monitor dump, against stand-ins for QEMU."""
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import List

from bringuplab.guest import boot, machine, monitor


def fake_hmp(path: Path, seen: List[str]) -> threading.Thread:
    """A monitor that talks like QEMU's: banner, prompt, an echo of each
    command with terminal escapes, an answer, the prompt again."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def serve() -> None:
        conn, _ = server.accept()
        with conn, server:
            conn.sendall(b"QEMU 10.0.2 monitor - type 'help'\r\n(qemu) ")
            buf = b""
            while True:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    cmd = line.decode()
                    seen.append(cmd)
                    conn.sendall(b"\x1b[K" + line + b"\r\n" +
                                 f"answer to {cmd}\r\n".encode() +
                                 b"(qemu) ")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_dump_asks_every_cpu_and_strips_the_terminal(tmp_path: Path):
    seen: List[str] = []
    sock = tmp_path / "hmp.sock"
    fake_hmp(sock, seen)
    text = monitor.dump(sock, [0, 1], timeout=10)
    assert seen == ["info status", "info cpus", "info registers -a",
                    "cpu 0", "info lapic", "cpu 1", "info lapic"]
    assert "### info cpus\nanswer to info cpus\n" in text
    assert "\x1b" not in text and "\r" not in text
    assert "(qemu)" not in text


def test_dump_without_a_monitor_says_so_in_one_line(tmp_path: Path):
    text = monitor.dump(tmp_path / "absent.sock", range(4), timeout=1)
    assert text.startswith("### monitor: unavailable:")
    assert text.count("\n") == 1


def spec(silence: float, timeout: float = 60) -> boot.BootSpec:
    return boot.BootSpec(machine.make(1), Path("bzImage"), None,
                         timeout=timeout, silence=silence)


def watch_script(log: Path, script: str, silence: float,
                 timeout: float = 60) -> str:
    """boot.watch() over a Python process running `script`."""
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-u", "-c", script],
                                stdout=out)
        try:
            return boot.watch(proc, log, spec(silence, timeout))
        finally:
            proc.kill()
            proc.wait()


def test_a_silent_process_is_a_hang(tmp_path: Path):
    started = time.monotonic()
    why = watch_script(tmp_path / "console.log",
                       "import time; time.sleep(60)", silence=2)
    assert why == "silent for 2 s"
    assert time.monotonic() - started < 10


def test_a_talking_process_is_not_a_hang(tmp_path: Path):
    # Prints every 0.2 s for 4 s: longer than the silence allowed, never
    # quiet for as long.
    log = tmp_path / "console.log"
    why = watch_script(log, "import time\n"
                       "for i in range(20):\n"
                       "    print(i, flush=True); time.sleep(0.2)\n",
                       silence=2)
    assert why == ""
    assert log.read_text().split() == [str(i) for i in range(20)]


def test_the_deadline_holds_for_a_talking_process(tmp_path: Path):
    why = watch_script(tmp_path / "console.log",
                       "import time\n"
                       "while True:\n"
                       "    print('x', flush=True); time.sleep(0.2)\n",
                       silence=2, timeout=3)
    assert why == "killed at the deadline of 3 s"
