"""`make check`: every stage of the lab, counted, ending in one
'N passed, N failed' line and the path of the run's record (results/),
the JSON summary a CI system keeps.

The kernel is built from patches/ applied to a scratch worktree at base
(build/check/linux), never from the developer's tree, so a green check
on a work machine means the same as a green CI run.
"""
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, TextIO, Tuple

from bringuplab.build import checkpatch, kernel, tree, worktree
from bringuplab.guest import boot, initramfs
from bringuplab.host import diskspace, packages
from bringuplab.report import junit, quotes, record
from bringuplab.runs import matrix
from bringuplab.verdict import judge, parse
from bringuplab.errors import InfraError, LabError, QemuRefused, \
    SeriesDoesNotApply
from bringuplab.guest.machinespec import MachineSpec
from bringuplab.paths import BUILD, ROOT
from bringuplab.progress import of_boots

# Trees and their out dirs are siblings named alike (linux, out-NAME) so
# that with CCACHE_BASEDIR every tree compiles to the same ccache keys.
CHECK_TREE = BUILD / "check" / "linux"
# Where the split-out series were applied before they shared CHECK_TREE:
# removed when found, for the 1.5 GiB it holds.
OLD_EXTRAS_TREE = BUILD / "check" / "extras-linux"


@dataclass
class Tally:
    """The check's items: passed, failed (the series or the lab's tests
    are wrong), and not done for the lab's machinery (a QEMU that
    refused a machine, a base that could not be made): `infra`, which
    fails the check with exit 3 unless an item also failed."""
    passed: int = 0
    failed: int = 0
    infra: int = 0
    failures: List[str] = field(default_factory=list)
    steps: List[dict] = field(default_factory=list)
    # Where the PASS/FAIL lines go: stdout, or stderr under --json
    out: TextIO = field(default_factory=lambda: sys.stdout)

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def add(self, name: str, ok: bool, detail: str = "",
            infra: bool = False) -> bool:
        """One item: passed if `ok`, else failed, or with `infra` not
        done for the lab's machinery."""
        word = "PASS" if ok else "INFRA" if infra else "FAIL"
        self.say(f"check: {word} {name}" + (f": {detail}" if detail else ""))
        self.steps.append({"name": name, "ok": ok, "detail": detail,
                           "infra": not ok and infra})
        if ok:
            self.passed += 1
            return ok
        self.failures.append(name)
        if infra:
            self.infra += 1
        else:
            self.failed += 1
        return ok

    def guard(self, name: str, step: Callable[[], str],
              machinery: bool = False) -> bool:
        """Run a step that raises LabError on failure: a failed item, or
        with `machinery` (a step of the lab's own, not the series'), an
        InfraError counts as infrastructure."""
        start = time.monotonic()
        try:
            detail = step()
        except SeriesDoesNotApply as err:
            # a full disk is the machine's, whichever step found it
            return self.add(name, False, str(err),
                            infra=diskspace.says_no_space(str(err)))
        except InfraError as err:
            return self.add(name, False, str(err), infra=machinery
                            or diskspace.says_no_space(str(err)))
        except LabError as err:
            return self.add(name, False, str(err))
        return self.add(name, True,
                        f"{detail} ({time.monotonic() - start:.0f} s)")


def unit_tests(tally: Tally) -> None:
    proc = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-q",
                           "-p", "no:cacheprovider", str(ROOT / "tests")],
                          capture_output=True, text=True, check=False)
    last = proc.stdout.strip().splitlines()[-1:] or ["no output"]
    passed = sum(int(n) for n in re.findall(r"(\d+) passed", last[0]))
    tally.add(f"unit tests ({passed} passed)", proc.returncode == 0,
              last[0] if proc.returncode else "")
    if proc.returncode:
        tally.say(proc.stdout[-3000:])


def shellcheck(tally: Tally) -> None:
    scripts = [ROOT / "guest/init", ROOT / ".ci/run"]
    proc = subprocess.run(["shellcheck", *map(str, scripts)],
                          capture_output=True, text=True, check=False)
    tally.add("shellcheck guest/init .ci/run", proc.returncode == 0,
              proc.stdout.strip().splitlines()[0] if proc.returncode else "")


def quoted_figures(tally: Tally) -> None:
    """Every record README.md, docs/ and patches/ cite is clean and of
    the code it speaks of (quotes.py)."""
    name = "figures quoted from clean records of the code quoted"
    try:
        found = quotes.problems()
    except InfraError as err:      # no git history to tell codes apart
        tally.add(name, False, str(err), infra=True)
        return
    tally.add(name, not found, "; ".join(found[:3])
              + (f" (and {len(found) - 3} more)" if len(found) > 3 else ""))


def patches(tally: Tally) -> bool:
    """checkpatch every patch, then git am all of them on a clean base."""
    for rep in checkpatch.check_all():
        tally.add(f"checkpatch --strict {rep.patch}", not rep.findings,
                  "; ".join(rep.findings[:3]))
    series = tree.series_files()
    if worktree.remove(OLD_EXTRAS_TREE):
        tally.say(f"check: removed {OLD_EXTRAS_TREE}, which it no longer "
                  "uses")

    def apply() -> str:
        worktree.fresh(CHECK_TREE)
        tree.apply_series(series, CHECK_TREE)
        return f"{len(series)} patches"
    applied = tally.guard("git am on a clean base", apply)
    # The split-out series: each alone on the base and on the series, in
    # the same tree (one checkout less on disk), which then goes back to
    # the series for the builds. A failure there fails the check but
    # does not stop the boots.
    extras = tree.extra_names()
    for name in extras:
        for onto in ("base", "ours"):
            tally.guard(f"git am of series {name} on {onto}",
                        lambda which=f"{onto}+{name}":
                        apply_combination(which))
    if applied and extras:
        applied = tally.guard("the series again in the check tree", apply)
    return applied


def apply_combination(which: str) -> str:
    """git am a combination (tree.combination()) on a clean base in the
    check tree."""
    files = tree.combination(which)
    tree.apply_series(files, worktree.fresh(CHECK_TREE))
    return f"{len(files)} patches"


def build_and_boot(tally: Tally, config: str, matrix_name: str
                   ) -> Optional[Tuple[kernel.Kernel, Path]]:
    """Build the check tree with `config` and boot matrix `matrix_name`;
    the kernel and initramfs booted, None if the build failed."""
    built = []

    def build() -> str:
        built.append(kernel.build(config, CHECK_TREE,
                                  CHECK_TREE.parent / f"out-{config}",
                                  tag="-check"))
        return str(built[0].image)
    if not tally.guard(f"kernel build ({config} config)", build):
        return None
    kern = built[0]
    if tree.series_files():
        early_symbols_outside_bss(tally, kern)
    initrd = initramfs.build(CHECK_TREE, kernel=kern.image)
    rows = matrix.run(matrix_name, kern, initrd,
                      expect_modes=bool(tree.series_files()),
                      done=of_boots(len(matrix.entries(matrix_name)),
                                    f"boots of {matrix_name}"))
    tally.say(matrix.render(rows))
    for row in rows:
        refused = row.result.verdict == judge.INFRA
        tally.add(f"boot {row.entry.name}", row.ok,
                  "; ".join(row.result.reasons)[:200], infra=refused)
        if not row.ok and not refused:
            print_excerpt(row.result.log, tally.out)
    return kern, initrd


# What secondary_startup_64() reads on the boot CPU, before clear_bss():
# in .bss it would hold what the decompressor left there (seen: the boot
# CPU of a KASAN kernel took the AP path and faulted before any output).
EARLY_SYMBOLS = ("smpboot_control",)


def early_symbols_in_bss(system_map: str) -> Tuple[List[str], List[str]]:
    """EARLY_SYMBOLS found in a System.map, and those of them at or
    after __bss_start (all of them if it has none)."""
    addrs = {}
    for line in system_map.splitlines():
        parts = line.split()
        if len(parts) == 3:
            addrs[parts[2]] = int(parts[0], 16)
    bss = addrs.get("__bss_start")
    found = [sym for sym in EARLY_SYMBOLS if sym in addrs]
    return found, [sym for sym in found if bss is None or addrs[sym] >= bss]


def early_symbols_outside_bss(tally: Tally, kern: kernel.Kernel) -> None:
    """The variables the boot CPU reads before clear_bss() are in the
    kernel image, not in .bss (System.map of the build)."""
    found, wrong = early_symbols_in_bss(kern.system_map.read_text())
    name = kern.out.name
    tally.add(f"boot CPU's early variables outside .bss ({name})",
              bool(found) and not wrong,
              f"in .bss: {', '.join(wrong)}" if wrong else
              "" if found else f"none of {', '.join(EARLY_SYMBOLS)} found")


# The watchdog's own test: an AP stuck in the trampoline on purpose
# keeps the console quiet while the control CPU waits 10 s for it (the
# kernel's own limit); with 5 s of silence allowed the lab must call it
# a hang before the kernel gives up, and have QEMU's view of every vCPU
# saved.
WATCH_SILENCE_S = 5.0
GIVE_UP_S = 10
WATCH = MachineSpec(4, "1x2x2")


def hang_watch(tally: Tally, kern: kernel.Kernel, initrd: Path) -> None:
    """A silent guest is a hang, found by silence, with the monitor's
    state of every vCPU kept next to its log."""
    spec = boot.BootSpec(WATCH.make(), kern.image, initrd,
                         "smpboot_fault=rmstall:1",
                         label="watch-rmstall-silent",
                         silence=WATCH_SILENCE_S)
    start = time.monotonic()
    res = boot.run(spec, quiet=True)
    took = time.monotonic() - start
    state = Path(res.log).with_suffix(".monitor")
    dump = state.read_text(errors="replace") if state.is_file() else ""
    problems = []
    if res.verdict != "hang" or not res.reasons or \
            f"silent for {WATCH_SILENCE_S:.0f} s" not in res.reasons[0]:
        problems.append(f"verdict {res.verdict}: {res.reasons[:1]}")
    if took > GIVE_UP_S + WATCH_SILENCE_S:
        problems.append(f"took {took:.0f} s, the kernel waits "
                        f"{GIVE_UP_S} s")
    cpus = len(re.findall(r"^[ *] CPU #\d+:", dump, re.M))
    # Count QEMU's answers, not the questions asked
    lapics = len(re.findall(r"^dumping local APIC state for CPU \d+",
                            dump, re.M))
    if cpus != WATCH.cpus or lapics != WATCH.cpus:
        problems.append(f"monitor state: {cpus} vCPUs listed, {lapics} "
                        f"local APICs, expected {WATCH.cpus}")
    tally.add("hang found by silence, monitor state kept", not problems,
              "; ".join(problems) or f"{took:.0f} s, {state}")


def print_excerpt(log: str, out: Optional[TextIO] = None) -> None:
    """Where a failed boot went wrong, from its console log: CI keeps only
    what check prints."""
    out = out or sys.stdout
    try:
        text = Path(log).read_text(errors="replace")
    except OSError as err:
        print(f"check: no console log to show ({err})", file=out)
        return
    where = "around the first splat" if parse.splats(text) \
        else "its last lines"
    print(f"--- {log}, {where} ---", file=out)
    print(parse.excerpt(text), file=out)
    print("--- end of excerpt ---", file=out, flush=True)


# The host's clock, the metric every benchmark claim is in, read by the
# probe in a real boot: QEMU's vCPU threads found by name under /proc, the
# bringup lines caught as QEMU writes them (hostcpu.py). Round-robin TCG
# as the benchmark's target machine; 8 vCPUs for a bringup long enough
# to time.
HOST_CLOCK = MachineSpec(8, "2x2x2")


def host_clock(tally: Tally, kern: kernel.Kernel, initrd: Path) -> None:
    """A boot timed by the host's clock, as bench and compare time
    theirs: the check fails if the probe returns nothing."""
    spec = boot.BootSpec(HOST_CLOCK.make(), kern.image, initrd,
                         label="host-clock", host_cpu=True)
    res = boot.run(spec, quiet=True)
    problems = []
    if res.verdict != "pass":
        problems.append(f"verdict {res.verdict}: "
                        + "; ".join(res.reasons)[:150])
    if res.host_wall_ms is None or res.host_vcpu_ms is None:
        problems.append("the host-CPU probe measured nothing")
    elif res.host_wall_ms <= 0 or res.host_vcpu_ms <= 0:
        problems.append(f"the probe measured {res.host_wall_ms} ms wall, "
                        f"{res.host_vcpu_ms} ms of vCPU threads")
    tally.add(f"host clock read by the probe ({HOST_CLOCK.cpus} vCPUs)",
              not problems, "; ".join(problems) or
              f"bringup {res.host_wall_ms} ms by the host, vCPU threads "
              f"{res.host_vcpu_ms} ms, log {res.log}")


# What each config's boots are followed by (besides its matrix).
AFTER_MATRIX = {"guest": host_clock, "debug": hang_watch}
CONFIGS = (("guest", "check"), ("debug", "debug"), ("kasan", "kasan"))

# What a check writes under build/ from nothing (diskspace.py): the
# base tree with its history, the check tree, the lab overlay's tree,
# the out dirs of CONFIGS, each a little above what `du -sh` gave after
# a fresh clone's check (1.7 G, 1.5 G, 1.5 G, 111 M, 161 M, 160 M); the
# margin is for ccache, logs and the build's scratch files.
CHECK_PARTS = (
    diskspace.Part(BUILD / "linux", 1900 << 20),
    diskspace.Part(CHECK_TREE, 1600 << 20),
    diskspace.Part(kernel.overlay_path(CHECK_TREE), 1600 << 20),
    diskspace.Part(CHECK_TREE.parent / "out-guest", 200 << 20),
    diskspace.Part(CHECK_TREE.parent / "out-debug", 300 << 20),
    diskspace.Part(CHECK_TREE.parent / "out-kasan", 300 << 20),
)
CHECK_MARGIN = 1 << 30
# What `make check-quick` writes: the base tree and the check tree
QUICK_PARTS = CHECK_PARTS[:2]


def disk_space(tally: Tally, quick: bool) -> bool:
    """Whether build/'s file system has room for what the check will
    write; an infrastructure item, not a failure, when it has not."""
    parts = QUICK_PARTS if quick else CHECK_PARTS
    sp = diskspace.space(BUILD, parts, CHECK_MARGIN)
    return tally.add("disk space for build/", sp.enough, sp.line(),
                     infra=True)


def run(quick: bool = False, out: Optional[TextIO] = None
        ) -> record.Record:
    """Every step; the run's record, saved in results/ (its path printed
    last)."""
    started = record.now()
    tally = Tally(out=out or sys.stdout)
    packages.ensure(list(packages.NEEDS))
    unit_tests(tally)
    shellcheck(tally)
    quoted_figures(tally)
    applied = disk_space(tally, quick) \
        and tally.guard("tree build/linux (made from BASE if missing)",
                        lambda: tree.create(reset=False)
                        if not tree.is_tree() else "present",
                        machinery=True) \
        and patches(tally)
    if not quick and applied:
        for config, name in CONFIGS:
            booted = build_and_boot(tally, config, name)
            if booted and config in AFTER_MATRIX:
                after = AFTER_MATRIX[config]
                try:
                    after(tally, *booted)
                except QemuRefused as err:
                    tally.add(f"{after.__name__.replace('_', ' ')} "
                              f"({config})", False, str(err), infra=True)
    if tally.failures:
        tally.say("failed or not done: " + ", ".join(tally.failures))
    tally.say(f"{tally.passed} passed, {tally.failed} failed"
              + (f", {tally.infra} not done (infrastructure)"
                 if tally.infra else ""))
    rec = record.make("check", not tally.failed and not tally.infra, {
        "quick": quick, "passed": tally.passed, "failed": tally.failed,
        "infra": tally.infra, "failures": tally.failures,
        "steps": tally.steps}, started)
    path = record.save(rec)
    tally.say(f"check: JUnit XML {junit.write(rec, path.with_suffix('.xml'))}")
    tally.say(f"check: record {path}")
    return rec
