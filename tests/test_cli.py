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


def test_fault_entries_expect_the_failed_cpu_named_and_offline(tmp_path):
    from bringuplab import matrix
    entry = matrix.fault("nosipi", 3)
    assert entry.expect_online == 7
    assert "smpboot_fault=nosipi:3" in entry.append
    assert "lab.cpu=3" in entry.append
    assert matrix.fault("nosipi", 3, parallel=False).append.endswith(
        matrix.SERIAL)
    log = tmp_path / "boot.log"
    log.write_text("[ 20.1] smpboot: do_boot_cpu failed(-1) to wakeup "
                   "CPU#3\n")
    assert matrix.missing_lines(entry.dmesg, str(log)) == []
    log.write_text("[ 20.1] smpboot: do_boot_cpu failed(-1) to wakeup "
                   "CPU#31\n")
    assert matrix.missing_lines(entry.dmesg, str(log)) != []


def test_expected_fault_line_is_excused_other_splats_are_not():
    from bringuplab import matrix, parse
    from pathlib import Path
    log = (Path(__file__).parent / "logs" / "series-intel-16-timing.log"
           ).read_text()
    extra = "[ 10.8] smpboot: do_boot_cpu failed(-1) to wakeup CPU#3\n"
    entry = matrix.fault("nosipi", 3, cpus=16)
    entry = matrix.replace(entry, expect_online=16, plan=("cpus",))
    res = parse.parse(log + extra, 16)
    assert res.verdict == "fail"
    matrix.excuse_expected(entry, res)
    assert res.verdict == "pass", res.reasons
    res = parse.parse(log + extra + "[ 11.0] WARNING: CPU: 1 PID: 1 at x\n",
                      16)
    matrix.excuse_expected(entry, res)
    assert res.verdict == "fail"
