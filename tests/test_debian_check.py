"""guest/debian-check, the Debian image's checks, run on the host
against a fake CPU sysfs, with systemctl, kexec, dmesg and
systemd-analyze replaced by scripts that write down how they were
called: its three kernels, and what the lab's parser reads of them."""
import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict

import pytest

from bringuplab.verdict import parse

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "guest" / "debian-check"
BASE = ("console=ttyS0 panic=-1 lab.plan=cpus,selftest,suspend,kexec "
        "root=/dev/vda rw")
STUBS = {
    "systemctl": 'echo "systemctl $*" >>"$LAB_CALLS"',
    "kexec": 'echo "kexec $*" >>"$LAB_CALLS"',
    "dmesg": "echo '[    1.000000] cpuhp: parallel bringup of 3 CPUs'",
    "systemd-analyze": "echo 'Startup finished in 2.5s (kernel) + 9.1s "
                       "(userspace) = 11.6s'",
}


@pytest.fixture(name="env")
def fixture_env(tmp_path: Path) -> Dict[str, str]:
    if not shutil.which("bash"):
        pytest.fail("bash is needed to run the selftests")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in STUBS.items():
        stub = bin_dir / name
        stub.write_text(f"#!/bin/sh\n{body}\n")
        stub.chmod(0o755)
    cpus = tmp_path / "cpu"
    for cpu in range(4):
        (cpus / f"cpu{cpu}" / "hotplug").mkdir(parents=True)
        (cpus / f"cpu{cpu}" / "online").write_text("1\n")
        (cpus / f"cpu{cpu}" / "hotplug" / "state").write_text("233\n")
    (cpus / "online").write_text("0-3\n")
    (cpus / "present").write_text("0-3\n")
    tests = tmp_path / "selftests"
    tests.mkdir()
    (tests / "a-test.sh").write_text("echo checking\nexit 0\n")
    (tests / "b-test.sh").write_text("exit 4\n")
    (tmp_path / "cmdline").write_text(BASE + "\n")
    for name in ("alarm", "power", "tty", "calls"):
        (tmp_path / name).write_text("")
    return dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}",
                LAB_STATE=str(tmp_path / "state" / "stage"),
                LAB_SELFTESTS=str(tests), LAB_CPU_SYSFS=str(cpus),
                LAB_CMDLINE=str(tmp_path / "cmdline"),
                LAB_BOOT="/boot", LAB_ALARM=str(tmp_path / "alarm"),
                LAB_POWER=str(tmp_path / "power"),
                LAB_TTY=str(tmp_path / "tty"),
                LAB_CALLS=str(tmp_path / "calls"))


def kernel(env: Dict[str, str]) -> str:
    """Run the script once (one kernel); what it printed."""
    tty = Path(env["LAB_TTY"])
    before = tty.read_text()
    subprocess.run(["sh", str(SCRIPT)], env=env, check=True, timeout=60)
    return tty.read_text()[len(before):]


def kexec_cmdline(env: Dict[str, str]) -> str:
    """The command line of the last kexec -l, written where the next
    kernel's /proc/cmdline would be."""
    loads = [line for line in Path(env["LAB_CALLS"]).read_text()
             .splitlines() if line.startswith("kexec -l ")]
    line = loads[-1].split("--command-line=", 1)[1]
    Path(env["LAB_CMDLINE"]).write_text(line + "\n")
    return line


def test_three_kernels_a_round_trip_into_serial_and_back(env):
    first = kernel(env)
    facts = parse.parse(first)
    assert facts.cpus_online == 4 and facts.offline_stale == []
    assert facts.steps == {"selftest": "done", "suspend": "pass"}
    assert (facts.tap.total, facts.tap.passed, facts.tap.skipped) == \
        (2, 1, 1)
    assert "LAB: mode cpuhp: parallel bringup of 3 CPUs" in first
    assert "LAB: systemd-analyze Startup finished in 2.5s" in first
    assert Path(env["LAB_POWER"]).read_text() == "mem\n"
    assert kexec_cmdline(env) == BASE + " cpuhp.parallel=0"
    assert Path(env["LAB_CALLS"]).read_text().splitlines()[-1] == \
        "systemctl kexec"

    second = kernel(env)
    assert "LAB: kexec stage=third serial_next=no" in second
    assert kexec_cmdline(env) == BASE
    assert not parse.parse(second).done

    third = parse.parse(kernel(env))
    assert third.steps == {"kexec": "pass"} and third.done
    assert third.cpus_online == 4
    assert Path(env["LAB_CALLS"]).read_text().splitlines()[-1] == \
        "systemctl reboot"
    assert not Path(env["LAB_STATE"]).exists()


def test_a_cpu_offline_after_the_round_trip_fails_the_kexec_step(env):
    kernel(env)
    kexec_cmdline(env)
    kernel(env)
    kexec_cmdline(env)
    cpus = Path(env["LAB_CPU_SYSFS"])
    (cpus / "online").write_text("0-2\n")
    (cpus / "cpu3" / "online").write_text("0\n")
    third = parse.parse(kernel(env))
    assert third.steps == {"kexec": "fail"}
    assert third.offline_stale == ["3:233"]


def test_the_boot_time_run_only_counts_cpus_and_resets(env):
    Path(env["LAB_CMDLINE"]).write_text(
        "console=ttyS0 lab.plan=cpus root=/dev/vda rw\n")
    facts = parse.parse(kernel(env))
    assert facts.done and facts.steps == {} and facts.cpus_online == 4
    # systemd's times once the boot has finished, then the reset
    assert Path(env["LAB_CALLS"]).read_text() == (
        "systemctl is-system-running --wait\nsystemctl reboot\n")


def test_a_plan_without_suspend_skips_it_and_still_kexecs(env):
    """lab.plan= names the first kernel's steps: no suspend asked, no
    write to the power state, and the kexec round trip still runs."""
    cmdline = ("console=ttyS0 lab.plan=cpus,selftest,kexec "
               "root=/dev/vda rw")
    Path(env["LAB_CMDLINE"]).write_text(cmdline + "\n")
    first = kernel(env)
    assert "LAB: begin plan=cpus,selftest,kexec" in first
    assert parse.parse(first).steps == {"selftest": "done"}
    assert Path(env["LAB_POWER"]).read_text() == ""
    assert kexec_cmdline(env) == cmdline + " cpuhp.parallel=0"
    assert Path(env["LAB_CALLS"]).read_text().splitlines()[-1] == \
        "systemctl kexec"
    assert not parse.parse(first).done
