"""Booting the Debian image: the QEMU command and the expectations of
each boot, the multi-user line found by the host, the sysboot record."""
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from bringuplab.guest import machine, milestone
from bringuplab.report import record, render
from bringuplab.runs import sysboot
from bringuplab.errors import UsageError

# systemd 252 (bookworm) on the serial console, its colour codes kept
OK_LINE = (b"[\x1b[0;32m  OK  \x1b[0m] Reached target \x1b[0;1;39m"
           b"multi-user.target\x1b[0m - Multi-User System.\r\n")
MACH = machine.make(32, "2x8x2", 2)


def fake_image(tmp_path: Path, name: str) -> Path:
    where = tmp_path / name
    where.mkdir()
    for f in ("disk.img", "vmlinuz", "initrd.img"):
        (where / f).write_text(f)
    return tmp_path


def test_multi_user_line_found_across_chunks():
    match = milestone.LineMatcher(milestone.MULTI_USER)
    assert not match.feed(b"[  OK  ] Reached target Basic System.\n")
    assert not match.feed(OK_LINE[:30])
    # The line is whole only once its end arrives
    assert not match.feed(OK_LINE[30:-2])
    assert match.feed(OK_LINE[-2:])


def test_other_targets_are_not_multi_user():
    match = milestone.LineMatcher(milestone.MULTI_USER)
    assert not match.feed(b"[  OK  ] Reached target Graphical Interface.\n"
                          b"Starting multi-user.target\n")


def test_milestone_times_the_line_from_qemu_start(tmp_path):
    log = tmp_path / "console.log"
    log.write_bytes(b"Linux version 6.1\n" + OK_LINE)
    probe = milestone.Milestone(log, milestone.MULTI_USER, since=0.0)
    probe.run()              # the line is there: returns at once
    assert probe.ms is not None and probe.ms > 0


def test_check_boot_of_our_image(tmp_path):
    images = fake_image(tmp_path, "ours")
    spec = sysboot.spec("ours", MACH, "serial", sysboot.CHECKS, images)
    assert spec.kernel == images / "ours" / "vmlinuz"
    assert spec.initrd == images / "ours" / "initrd.img"
    assert "root=/dev/vda rw no_console_suspend cpuhp.parallel=0" in \
        spec.cmdline()
    assert "lab.plan=cpus,selftest,suspend,kexec" in spec.cmdline()
    assert spec.qemu_extra == [
        "-drive", f"file={images / 'ours' / 'disk.img'},format=raw,"
        "if=virtio", "-snapshot"]
    want = spec.expectations()
    assert (want.vcpus, want.online, want.mode) == (32, 32, "serial")
    assert want.plan == sysboot.CHECKS
    assert spec.milestone == milestone.MULTI_USER and spec.host_cpu
    assert spec.deadline() == sysboot.CHECK_TIMEOUT


def test_debian_kernel_has_no_mode_to_show(tmp_path):
    images = fake_image(tmp_path, "debian")
    spec = sysboot.spec("debian", MACH, None, ("cpus",), images)
    assert "cpuhp.parallel" not in spec.cmdline()
    assert spec.expectations().mode is None
    assert spec.deadline() == sysboot.TIME_TIMEOUT


def test_an_image_not_built_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="image 'ours' has no disk.img"):
        sysboot.spec("ours", MACH, "parallel", ("cpus",), tmp_path)


def test_sysboot_record_renders_medians_per_arm(tmp_path):
    samples = [dict(arm=arm, rep=rep, verdict="pass", reasons=[],
                    mode=None, multi_user_ms=base + rep,
                    bringup_host_ms=base / 100, bringup_dmesg_ms=None,
                    cpus_online=32, log=f"build/logs/{arm}-{rep}.log")
               for rep in (1, 2, 3)
               for arm, base in (("debian", 60000.0),
                                 ("ours-parallel", 50000.0))]
    path = tmp_path / "sysboot.json"
    path.write_text(json.dumps(dict(kind="sysboot", ok=True, results=dict(
        machine=dict(cpus=32, topology="2x8x2"),
        arms=["debian", "ours-parallel"], reps=3, samples=samples,
        images=dict(debian=dict(
            release="6.1.0-57-cloud-amd64", kernel_packages={
                "linux-image-6.1.0-57-cloud-amd64": "6.1.192-3"}))))))
    text = render.markdown(record.load(path))
    assert "32 vCPUs (2x8x2), 3 reps" in text
    assert "| debian | 3/3 | 60002 | 1.00 | 600 | - |" in text
    assert "| ours-parallel | 3/3 | 50002 | 0.83 | 500 | - |" in text
    assert "`build/logs/debian-1.log`" in text
    assert ("- debian: `6.1.0-57-cloud-amd64` "
            "(linux-image-6.1.0-57-cloud-amd64 6.1.192-3)") in text


def test_a_check_boot_leaves_a_sysboot_record(tmp_path, monkeypatch):
    """One arm, one rep, every check named; a failed boot says why."""
    images = fake_image(tmp_path, "ours")
    monkeypatch.setattr(record, "RESULTS", tmp_path / "results")
    result = SimpleNamespace(
        verdict="fail", reasons=["kexec: 31/32 CPUs online"],
        mode="serial", host_milestone_ms=41000.0, host_wall_ms=900.0,
        bringup_ms=850.0, cpus_online=31, log="build/logs/s.log")
    monkeypatch.setattr(sysboot.boot, "run", lambda spec: result)
    got, rec = sysboot.check("ours", MACH, "serial", images=images)
    assert got is result and rec.kind == "sysboot" and not rec.ok
    assert rec.results["arms"] == ["ours-serial"]
    assert rec.results["checks"] == list(sysboot.CHECKS)
    [path] = (tmp_path / "results").glob("sysboot-*.json")
    text = render.markdown(record.load(path))
    assert "checks: cpus, selftest, suspend, kexec" in text
    assert "| ours-serial | 0/1 | 41000 | - | 900 | 850 |" in text
    assert "- ours-serial rep 1: kexec: 31/32 CPUs online" in text


@pytest.mark.parametrize("text,want", [
    ("kexec,cpus", ("cpus", "kexec")),
    ("cpus,selftest,kexec", ("cpus", "selftest", "kexec")),
    ("cpus", ("cpus",))])
def test_a_plan_is_the_named_checks_in_their_order(text, want):
    assert sysboot.plan_of(text) == want


@pytest.mark.parametrize("text,message", [
    ("cpus,hibernate", "unknown check 'hibernate'"),
    ("selftest,kexec", "--plan must name cpus")])
def test_a_bad_plan_is_a_usage_error(text, message):
    with pytest.raises(UsageError, match=message):
        sysboot.plan_of(text)
