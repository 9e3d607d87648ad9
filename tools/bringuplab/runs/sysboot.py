"""Booting a Debian 12 image (image.py) as a user's machine boots: QEMU
runs the image's own /boot/vmlinuz-* and initrd.img-* with root= on a
virtio disk, systemd reaches multi-user.target, guest/debian-check
prints the lab's lines and resets; the lab's judge judges the console.

`check`: one boot with the checks of its plan (default every one:
cpus, selftest, suspend, the kexec round trip), and its record. `compare`: Debian's own kernel against ours, parallel and
serial, booted in turn rep after rep with only the cpus check: the host
time from QEMU's start to systemd's "Reached target Multi-User System"
and the bringup window; a `sysboot` record.
"""
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from bringuplab import progress
from bringuplab.guest import boot, machine as machmod, milestone
from bringuplab.report import record
from bringuplab.verdict import judge
from bringuplab.errors import UsageError
from bringuplab.guest.image import IMAGES
from bringuplab.verdict.result import BootResult

CHECKS = ("cpus", "selftest", "suspend", "kexec")
# The label of every boot of an image (its log's name starts with it)
LABEL = "sysboot-"
# Seconds: three systemd boots of 32 vCPUs under round-robin TCG on a
# small host, the selftests offlining and onlining every CPU in between
CHECK_TIMEOUT = 7200.0
TIME_TIMEOUT = 1800.0
# A quiet console for this long is a hang: initramfs and udev on 32
# vCPUs under TCG go quiet for longer than the busybox guest ever does
SILENCE_S = 600.0


@dataclass(frozen=True)
class Arm:
    """A kernel of the comparison: an image, and whether the series'
    mode is expected (None for Debian's own kernel) and which."""
    name: str
    image: str
    mode: Optional[str]


def image_files(name: str, images: Path = IMAGES) -> Dict[str, Path]:
    """The disk, kernel and initrd of a built image; UsageError if it
    was not built."""
    where = images / name
    files = {f: where / f for f in ("disk.img", "vmlinuz", "initrd.img")}
    missing = [f for f, p in files.items() if not p.is_file()]
    if missing:
        raise UsageError(f"image '{name}' has no {missing[0]} in {where}: "
                         f"run `bringup image {name} ...`")
    return files


def about(name: str, images: Path = IMAGES) -> dict:
    """What `bringup image` wrote of image `name` (kernel release and
    packages, apt sources), {} if it wrote nothing."""
    try:
        return json.loads((images / name / "image.json").read_text())
    except (OSError, ValueError):
        return {}


def spec(name: str, mach: machmod.Machine, mode: Optional[str],
         plan: Sequence[str], images: Path = IMAGES) -> boot.BootSpec:
    """The boot of image `name` on `mach`; `mode` "serial" boots with
    cpuhp.parallel=0 and, with "parallel", is what the mode line must
    say (None: Debian's kernel, no mode line)."""
    files = image_files(name, images)
    # no_console_suspend: the console keeps printing through a suspend
    # cycle, so a slow resume shows its progress instead of silence
    append = "root=/dev/vda rw no_console_suspend" + (
        " cpuhp.parallel=0" if mode == "serial" else "")
    cpus = mach.cpus
    return boot.BootSpec(
        mach, files["vmlinuz"], files["initrd.img"], append, list(plan),
        CHECK_TIMEOUT if len(plan) > 1 else TIME_TIMEOUT,
        label=f"{LABEL}{name}-{mode or 'debian'}",
        expect=judge.Expect(cpus, cpus, cpus, tuple(plan), mode=mode),
        # -snapshot: every boot starts from the image as built
        qemu_extra=["-drive", f"file={files['disk.img']},format=raw,"
                    "if=virtio", "-snapshot"],
        host_cpu=True, silence=SILENCE_S, milestone=milestone.MULTI_USER)


def plan_of(text: str) -> Tuple[str, ...]:
    """The checks a comma list names, in CHECKS order; UsageError for an
    unknown one or a list without cpus."""
    steps = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in steps if s not in CHECKS]
    if bad:
        raise UsageError(f"unknown check '{bad[0]}' (known: "
                         f"{', '.join(CHECKS)})")
    if "cpus" not in steps:
        raise UsageError("--plan must name cpus")
    return tuple(s for s in CHECKS if s in steps)


def check(name: str, mach: machmod.Machine, mode: str,
          plan: Sequence[str] = CHECKS, images: Path = IMAGES
          ) -> Tuple[BootResult, record.Record]:
    """One boot of image `name` with the checks of `plan` (all by
    default); its result and its sysboot record (saved), one arm of one
    rep."""
    started = record.now()
    result = boot.run(spec(name, mach, mode, plan, images))
    arm = Arm(f"{name}-{mode}", name, mode)
    rec = record.make("sysboot", result.verdict == "pass", dict(
        machine=dict(cpus=mach.cpus, topology=mach.topology),
        arms=[arm.name], reps=1, checks=list(plan),
        samples=[sample(arm, 1, result)],
        images={arm.name: about(name, images)}), started)
    progress.say(f"sysboot: record {record.save(rec)}")
    return result, rec


def sample(arm: Arm, rep: int, result: BootResult) -> dict:
    return dict(arm=arm.name, rep=rep, verdict=result.verdict,
                reasons=result.reasons, mode=result.mode,
                multi_user_ms=result.host_milestone_ms,
                bringup_host_ms=result.host_wall_ms,
                bringup_dmesg_ms=result.bringup_ms,
                cpus_online=result.cpus_online, log=result.log)


def compare(arms: Sequence[Arm], mach: machmod.Machine, reps: int
            ) -> record.Record:
    """Every arm once per rep, in turn; the sysboot record (saved)."""
    started = record.now()
    steps = progress.Progress(reps * len(arms), "sysboot")
    samples: List[dict] = []
    for rep in range(1, reps + 1):
        for arm in arms:
            result = boot.run(spec(arm.image, mach, arm.mode, ("cpus",)),
                              quiet=True)
            samples.append(sample(arm, rep, result))
            steps.done(f"{arm.name} rep {rep}: {result.verdict}, "
                       f"multi-user {result.host_milestone_ms} ms")
    ok = all(s["verdict"] == "pass" and s["multi_user_ms"] is not None
             for s in samples)
    rec = record.make("sysboot", ok, dict(
        machine=dict(cpus=mach.cpus, topology=mach.topology),
        arms=[a.name for a in arms], reps=reps, samples=samples,
        images={a.name: about(a.image) for a in arms}), started)
    progress.say(f"sysboot: record {record.save(rec)}")
    return rec


