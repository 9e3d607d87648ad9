"""Running tools/bringup with its stdout closed before it writes."""
import subprocess
import sys
from pathlib import Path
from typing import List

BRINGUP = Path(__file__).resolve().parents[1] / "tools" / "bringup"


def ends_quietly(args: List[str]) -> None:
    """`bringup ARGS | head` with the reader gone at once: exit 141 (the
    shell's status for SIGPIPE), no traceback on stderr."""
    proc = subprocess.Popen([sys.executable, str(BRINGUP), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and "Exception ignored" not in err, err
