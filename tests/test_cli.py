"""Bad input gets one clear line and exit 2, never a traceback."""
import subprocess
import sys
from pathlib import Path

import pytest

BRINGUP = Path(__file__).resolve().parents[1] / "tools" / "bringup"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BRINGUP), *args],
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize("args,message", [
    (["boot", "--profile", "sparc"], "unknown profile 'sparc'"),
    (["boot", "--cpus", "3", "--topology", "2x2x1"], "not --cpus 3"),
    (["boot", "--cpus", "600"], "at most 288"),
    (["boot", "--tcg", "fast"], "unknown TCG mode"),
    (["boot", "--plan", "cpus,dance"], "unknown plan step 'dance'"),
    (["boot", "--cpus", "many"], "invalid int value"),
    (["boot", "--accel", "hax"], "unknown accelerator"),
    (["matrix", "nosuch"], "unknown matrix 'nosuch'"),
    (["kernel", "--config", "huge"], "unknown config 'huge'"),
    (["frobnicate"], "invalid choice"),
])
def test_one_line_error(args, message):
    proc = run(*args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr


def test_kvm_is_refused_with_a_pointer_to_tcg():
    proc = run("boot", "--accel", "kvm")
    assert proc.returncode == 2
    assert "--tcg" in proc.stderr and "Traceback" not in proc.stderr
