"""`bringup buildtest`: base and series built side by side for many
targets, as the kernel test robot would. The series side is the main
series with every split-out series of patches/ on top (what a
distribution would carry), so their code is built for every target too.

A target fails on a build error in either tree, and on any warning of
the series build that the base build of the same target does not have
(compared by kbuild.Diag.key: file, function, kind and text, no line
numbers, so a warning that only moved is not new).
"""
import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from bringuplab.build import base as basemod, kconfig, tree as treemod, \
    worktree
from bringuplab.host import packages
from bringuplab.report import columns, record
from bringuplab.errors import LabError
from bringuplab.build.kbuild import Config, Diag, new_diagnostics, \
    object_enabled, parse_diagnostics, touched_objects
from bringuplab.paths import BUILD, ROOT, TREE

BT = BUILD / "buildtest"


# --- Targets -------------------------------------------------------------

Options = Tuple[Tuple[str, str], ...]

# Debian's configs sign modules with keys only its build has and emit
# BTF with pahole: off, and no debug info (vmlinux is only built).
DEBIAN_FIXUPS: Options = (
    ("MODULE_SIG_KEY", '""'), ("SYSTEM_TRUSTED_KEYS", '""'),
    ("SYSTEM_REVOCATION_KEYS", '""'), ("DEBUG_INFO_BTF", "n"),
    ("DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT", "n"),
    ("DEBUG_INFO_DWARF4", "n"), ("DEBUG_INFO_DWARF5", "n"),
    ("DEBUG_INFO_NONE", "y"))
# A random x86_64 config the series is about: SMP on; and no -Werror, so
# a warning is compared, not a failed build.
RAND_FIXUPS: Options = (("SMP", "y"), ("64BIT", "y"), ("WERROR", "n"))
RAND_SEEDS = (1, 2, 3, 4)
GENERIC_OBJECTS = ("kernel/cpu.o", "kernel/smpboot.o", "kernel/workqueue.o")
TOUCHED = "@touched"  # a goal: the objects of the series' .c files
RECIPES = ("flavour", "defconfig", "debian", "randconfig")


@dataclass(frozen=True)
class Recipe:
    """How a target's .config is made: a lab flavour (kconfig/*.config on
    tinyconfig), a make target (defconfig, i386_defconfig), a Debian
    config (file name in /usr/src/linux-config-6.1) or a randconfig seed;
    then `options` set with scripts/config, olddefconfig, and checked."""
    kind: str
    arg: str
    options: Options = ()
    note: str = ""  # what the options do, shown instead of them

    def describe(self) -> str:
        extra = f" ({self.note})" if self.note else \
            "".join(f" {opt}={val}" for opt, val in self.options)
        return f"{self.kind} {self.arg}{extra}"


@dataclass(frozen=True)
class Target:
    """One build of base and series: make ARCH=... CROSS_COMPILE=...
    `extra` `goals` (`full_goals` instead with --full)."""
    name: str
    arch: str
    cross: str
    recipe: Recipe
    goals: Tuple[str, ...]
    extra: Tuple[str, ...] = ()
    full_goals: Tuple[str, ...] = ()
    needs: Tuple[str, ...] = ()  # packages.py stages

    @property
    def srcarch(self) -> str:
        return {"x86_64": "x86", "i386": "x86"}.get(self.arch, self.arch)


def _cross(name: str, arch: str, prefix: str, defconfig: str) -> Target:
    # the generic objects every architecture builds from the series
    # (kernel/, mm/: TOUCHED drops other architectures' files), and the
    # hotplug ones its headers reach
    return Target(name, arch, prefix, Recipe("defconfig", defconfig),
                  (TOUCHED, *GENERIC_OBJECTS), full_goals=("vmlinux",),
                  needs=(f"cross-{name}",))


def _debian(flavour: str) -> Recipe:
    return Recipe("debian", f"config.amd64_none_{flavour}.xz",
                  DEBIAN_FIXUPS, "no signing keys, BTF, debug info")


def targets() -> List[Target]:
    """Every target, quick ones first."""
    guest = Recipe("flavour", "guest")
    return [
        Target("x86_64-w1", "x86_64", "", guest, (TOUCHED,), ("W=1",)),
        Target("x86_64-sparse", "x86_64", "", guest, (TOUCHED,), ("C=1",),
               needs=("sparse",)),
        # the touched objects as Debian builds them: UNWINDER_ORC, so
        # objtool checks each object (the lab's flavours unwind by
        # guessing, and no objtool stack check runs there); minutes,
        # where the full debian-amd64 target takes half an hour
        Target("debian-amd64-touched", "x86_64", "", _debian("amd64"),
               (TOUCHED,), needs=("debian-configs",)),
        _cross("arm64", "arm64", "aarch64-linux-gnu-", "defconfig"),
        _cross("riscv64", "riscv", "riscv64-linux-gnu-", "defconfig"),
        _cross("ppc64le", "powerpc", "powerpc64le-linux-gnu-",
               "ppc64le_defconfig"),
        *[Target(f"x86_64-rand-{seed}", "x86_64", "",
                 Recipe("randconfig", str(seed), RAND_FIXUPS), (TOUCHED,))
          for seed in RAND_SEEDS],
        # every lab flavour on tinyconfig (nosmp is the guest with SMP=n;
        # the Debian-based ones are the debian-* targets)
        *[Target(f"x86_64-{name}", "x86_64", "", Recipe("flavour", name),
                 ("bzImage",)) for name, flav in kconfig.FLAVOURS.items()
          if not flav.base],
        Target("x86_64-noparallel", "x86_64", "",
               Recipe("flavour", "guest", (("HOTPLUG_PARALLEL", "n"),)),
               ("bzImage",)),
        Target("i386-smp", "i386", "",
               Recipe("defconfig", "i386_defconfig", (("SMP", "y"),)),
               ("bzImage",)),
        *[Target(f"debian-{flavour}", "x86_64", "", _debian(flavour),
                 ("vmlinux",), needs=("debian-configs",))
          for flavour in ("amd64", "cloud-amd64")]]


def select(only: str) -> List[Target]:
    """The targets `--only` names (comma list; shell patterns such as
    x86_64-rand-* allowed), all for an empty one; in the list's order."""
    every = targets()
    if not only:
        return every
    names = [n for n in only.split(",") if n]
    if not names:
        raise LabError("--only names no target")
    for name in names:
        if not any(fnmatch.fnmatchcase(t.name, name) for t in every):
            raise LabError(f"unknown buildtest target '{name}' (see "
                           "`bringup buildtest --list`)")
    return [t for t in every
            if any(fnmatch.fnmatchcase(t.name, n) for n in names)]


def render_list(chosen: Sequence[Target]) -> str:
    return columns.table(
        ["target", "ARCH", "CROSS_COMPILE", "make", "config"],
        [[t.name, t.arch, t.cross or "-",
          " ".join(t.extra + t.goals).replace(TOUCHED, "<touched .o>")
          + (f" (--full: {' '.join(t.full_goals)})" if t.full_goals
             else ""), t.recipe.describe()] for t in chosen])


# --- Building one side ---------------------------------------------------

# argv, cwd, env -> (exit code, stdout and stderr)
Runner = Callable[[List[str], Path, Dict[str, str]], Tuple[int, str]]


def run_captured(argv: List[str], cwd: Path,
                 env: Dict[str, str]) -> Tuple[int, str]:
    try:
        proc = subprocess.run(argv, cwd=cwd, env=env, text=True,
                              errors="replace", stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, check=False)
    except FileNotFoundError:
        raise LabError(f"command not found: {argv[0]}") from None
    return proc.returncode, proc.stdout


@dataclass(frozen=True)
class Side:
    """One of the two trees: build/buildtest/NAME/linux, its out dirs
    and logs beside it (laid out alike, so ccache shares objects)."""
    name: str
    tree: Path

    def out(self, target: Target) -> Path:
        return self.tree.parent / f"out-{target.name}"

    def log(self, target: Target) -> Path:
        return self.tree.parent / "logs" / f"{target.name}.log"


@dataclass
class Outcome:
    """What one side's olddefconfig and build of a target printed."""
    side: str
    returncode: int
    output: str
    goals: List[str]
    skipped: List[str] = field(default_factory=list)
    log: str = ""


def make_argv(target: Target, out: Path, goals: Sequence[str],
              jobs: int = 0, ccache: bool = True) -> List[str]:
    """make for `target`; jobs=0: a config step (no -j, no W=1/C=1)."""
    argv = ["make", f"O={out}"]
    if jobs:
        argv += [f"-j{jobs}", "--output-sync=target"]
    argv.append(f"ARCH={target.arch}")
    if target.cross:
        argv.append(f"CROSS_COMPILE={target.cross}")
    compiler = f"{target.cross}gcc"
    argv += [f"CC=ccache {compiler}" if ccache else f"CC={compiler}",
             "HOSTCC=gcc"]
    if jobs:
        argv += target.extra
    return argv + list(goals)


def config_args(options: Options) -> List[str]:
    """scripts/config arguments that set `options`."""
    args: List[str] = []
    for opt, val in options:
        if val in ("y", "n", "m"):
            args += [{"y": "--enable", "n": "--disable",
                      "m": "--module"}[val], opt]
        elif val.startswith('"'):
            args += ["--set-str", opt, val.strip('"')]
        else:
            args += ["--set-val", opt, val]
    return args


def _env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    # C locale: ASCII quotes in gcc's messages; CCACHE_BASEDIR: relative
    # paths, so base and series trees share ccache entries.
    return dict(os.environ, LC_ALL="C", CCACHE_BASEDIR=str(BUILD),
                **(extra or {}))


class _Steps:
    """A side's commands: all their output for its log, and that of the
    steps both sides run alike (olddefconfig, the build) for comparing.
    The series alone makes its config from the recipe, so what that
    step prints is not compared."""

    def __init__(self, target: Target, side: Side, run: Runner) -> None:
        self.target, self.side, self.run = target, side, run
        self.out = side.out(target)
        self.ccache = shutil.which("ccache") is not None
        self.output: List[str] = []
        self.compared: List[str] = []

    def call(self, argv: List[str], env: Optional[Dict[str, str]] = None,
             check: bool = True, compare: bool = True) -> int:
        self.output.append("$ " + " ".join(argv) + "\n")
        code, text = self.run(argv, self.side.tree, _env(env))
        self.output.append(text)
        if compare:
            self.compared.append(text)
        if check and code != 0:
            tail = " | ".join(text.strip().splitlines()[-2:])
            raise LabError(f"{self.target.name}: {self.side.name}: "
                           f"'{' '.join(argv[:1] + argv[-1:])}' failed "
                           f"(exit {code}): {tail}")
        return code

    def make_config(self, goal: str, env: Optional[Dict[str, str]] = None,
                    compare: bool = False) -> None:
        self.call(make_argv(self.target, self.out, [goal],
                            ccache=self.ccache), env, compare=compare)


def configure(steps: _Steps, config_from: Optional[Path]) -> None:
    """Write the out dir's .config: the recipe's (checked), or, for the
    base, the series' .config taken through olddefconfig, so both trees
    build the same options (a randconfig seed alone would not: the
    series' new symbols shift the random choices)."""
    target, out = steps.target, steps.out
    recipe = target.recipe
    dotconfig = out / ".config"
    if config_from is not None:
        shutil.copy(config_from, dotconfig)
    elif recipe.kind == "flavour":
        # base and series, no lab overlay: the flavour without its
        # options (the overlay is built and booted by make check)
        kconfig.configure(steps.side.tree, out, recipe.arg, overlay=False)
    elif recipe.kind == "defconfig":
        steps.make_config(recipe.arg)
    elif recipe.kind == "debian":
        dotconfig.write_bytes(kconfig.debian_config(recipe.arg))
    elif recipe.kind == "randconfig":
        steps.make_config("randconfig", {"KCONFIG_SEED": recipe.arg})
    else:
        raise LabError(f"{target.name}: unknown recipe '{recipe.kind}'")
    if recipe.options and config_from is None:
        steps.call(["scripts/config", "--file", str(dotconfig),
                    *config_args(recipe.options)], compare=False)
    steps.make_config("olddefconfig", compare=True)
    if config_from is None:
        want = {f"CONFIG_{opt}": val for opt, val in recipe.options
                if val in ("y", "n", "m")}
        bad = kconfig.mismatches(want, dotconfig.read_text())
        if bad:
            raise LabError(f"{target.name}: options did not stick: "
                           f"{'; '.join(bad[:4])}")


def goals_of(target: Target, full: bool, touched: Sequence[str],
             tree: Path, config: Config) -> Tuple[List[str], List[str]]:
    """(goals to make, objects left out): touched objects expanded, and
    objects this tree lacks or this config does not build dropped."""
    wanted: List[str] = []
    for goal in (target.full_goals if full and target.full_goals
                 else target.goals):
        wanted += touched_objects(touched, target.srcarch) \
            if goal == TOUCHED else [goal]

    def read(directory: str) -> Optional[str]:
        for name in ("Kbuild", "Makefile"):
            path = tree / directory / name
            if path.is_file():
                return path.read_text(errors="replace")
        return None
    goals, skipped = [], []
    for goal in dict.fromkeys(wanted):
        if goal.endswith(".o") and (
                not (tree / (goal[:-2] + ".c")).is_file()
                or not object_enabled(goal, read, config)):
            skipped.append(goal)
        else:
            goals.append(goal)
    return goals, skipped


def build_side(target: Target, side: Side, jobs: int, full: bool,
               touched: Sequence[str], config_from: Optional[Path] = None,
               run: Runner = run_captured) -> Outcome:
    """Configure and build `target` in a clean out dir of `side` (ccache
    replays the compiler's output, so every warning is printed again)."""
    steps = _Steps(target, side, run)
    shutil.rmtree(steps.out, ignore_errors=True)
    steps.out.mkdir(parents=True)
    log = side.log(target)
    log.parent.mkdir(parents=True, exist_ok=True)
    try:
        configure(steps, config_from)
        config = kconfig.parse((steps.out / ".config").read_text())
        goals, skipped = goals_of(target, full, touched, side.tree, config)
        code = 0
        if goals:
            print(f"lab: buildtest: {target.name}: {side.name}: make "
                  f"{' '.join(goals)[:100]}", file=sys.stderr, flush=True)
            code = steps.call(make_argv(target, steps.out, goals, jobs,
                                        steps.ccache), check=False)
    finally:
        log.write_text("".join(steps.output))
    return Outcome(side.name, code, "".join(steps.compared), goals,
                   skipped, str(log))


# --- Comparing the sides, the run ----------------------------------------

@dataclass
class Result:
    """A target's verdict: new diagnostics and build failures."""
    target: Target
    ok: bool
    seconds: float
    new: List[Diag] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)
    outcomes: List[Outcome] = field(default_factory=list)
    counts: Dict[str, int] = field(default_factory=dict)  # side -> diags

    def lines(self) -> List[str]:
        count = len(self.new)
        head = (f"buildtest: {'PASS' if self.ok else 'FAIL'} "
                f"{self.target.name}: {count} new warning"
                f"{'' if count == 1 else 's'}"
                + "".join(f", {p}" for p in self.problems[:1])
                + f" ({self.seconds:.0f} s)")
        return [head] + [f"  {p}" for p in self.problems[1:]] + \
            [f"  {d.show()}" for d in self.new]

    def to_dict(self) -> Dict[str, object]:
        t = self.target
        return {"name": t.name, "arch": t.arch, "cross_compile": t.cross,
                "config": t.recipe.describe(),
                "options": dict(t.recipe.options), "extra": list(t.extra),
                "ok": self.ok, "seconds": round(self.seconds, 1),
                "new_warnings": [dict(vars(d), shown=d.show())
                                 for d in self.new],
                "problems": self.problems,
                "sides": {o.side: {"returncode": o.returncode,
                                   "goals": o.goals, "skipped": o.skipped,
                                   "diagnostics": self.counts.get(o.side),
                                   "log": o.log}
                          for o in self.outcomes}}


def _failure(outcome: Outcome, diags: Sequence[Diag]) -> List[str]:
    """A failed build: what make said, then its first error."""
    first = next((d.show() for d in diags if d.kind == "error"), "")
    if not first:
        first = next((ln.strip() for ln in outcome.output.splitlines()
                      if "***" in ln), "")
    return [f"{outcome.side} build failed (make exit {outcome.returncode})",
            f"{outcome.side}: {first or 'no error line'} (log: "
            f"{outcome.log})"]


def compare_target(target: Target, sides: Tuple[Side, Side], jobs: int,
                   full: bool, touched: Sequence[str],
                   build: Optional[Callable[..., Outcome]] = None
                   ) -> Result:
    """Build the series, then the base with the series' .config; compare
    their diagnostics."""
    build = build or build_side
    base, series = sides
    start = time.monotonic()
    try:
        made = build(target, series, jobs, full, touched, None)
        was = build(target, base, jobs, full, touched,
                    series.out(target) / ".config")
    except LabError as err:
        return Result(target, False, time.monotonic() - start,
                      problems=[f"configure failed: {err}"])
    diags = {o.side: parse_diagnostics(o.output, str(side.tree),
                                       str(side.out(target)), target.cross)
             for o, side in ((was, base), (made, series))}
    new = new_diagnostics(diags[base.name], diags[series.name])
    problems: List[str] = []
    for outcome in (was, made):
        if outcome.returncode != 0:
            problems += _failure(outcome, diags[outcome.side])
    # the order of the two failures' lines: summaries first
    problems = problems[0::2] + problems[1::2]
    return Result(target, not new and not problems,
                  time.monotonic() - start, new, problems, [was, made],
                  {side: len(found) for side, found in diags.items()})


def series_built() -> str:
    """The combination the series side builds: the main series and every
    split-out series on top, in name order (tree.combination())."""
    return "+".join(["ours", *treemod.extra_names()])


def prepare_trees() -> Tuple[Side, Side]:
    """build/buildtest/base/linux at `base`, .../series/linux at base +
    patches/ + every split-out series (scratch worktrees of build/linux,
    made from BASE if it is missing)."""
    if not treemod.is_tree():
        treemod.create()
    base = worktree.fresh(BT / "base" / "linux", "base")
    series = worktree.fresh(BT / "series" / "linux", "base")
    treemod.apply_series(treemod.combination(series_built()), series)
    return Side("base", base), Side("series", series)


def changed_files(series: Side) -> List[str]:
    return treemod.git(["diff", "--name-only", "base..HEAD"],
                       series.tree).split()


def _first_line(argv: List[str], cwd: Optional[Path] = None) -> str:
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True,
                              text=True, check=False)
    except (FileNotFoundError, NotADirectoryError):
        return ""
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return lines[0] if proc.returncode == 0 and lines else ""


def environment(chosen: Sequence[Target],
                sides: Tuple[Side, Side]) -> Dict[str, object]:
    """Revisions and tool versions a run's record keeps."""
    compilers = sorted({f"{t.cross}gcc" for t in chosen})
    tools = {cc: _first_line([cc, "--version"]) or "missing"
             for cc in compilers}
    if any("C=1" in t.extra for t in chosen):
        tools["sparse"] = _first_line(["sparse", "--version"]) or "missing"
    tools["make"] = _first_line(["make", "--version"]) or "missing"
    git = ["git", "rev-parse", "-q", "--verify"]
    return {
        "repo": {"head": _first_line([*git, "HEAD"], ROOT),
                 "dirty": bool(_first_line(
                     ["git", "status", "--porcelain", "-uno"], ROOT))},
        "linux": {"tree": str(TREE),
                  "head": _first_line([*git, "HEAD"], TREE),
                  "base": _first_line([*git, "base^{commit}"], TREE),
                  "series_head": _first_line([*git, "HEAD"],
                                             sides[1].tree),
                  "patches": len(treemod.series_files()),
                  "series": series_built(),
                  "series_patches": len(treemod.combination(
                      series_built()))},
        "tools": tools}


def patches_at(head: str) -> str:
    """The last commit that touched patches/ as of the lab's `head`."""
    found = record.patches_revision(head) if head else ""
    return "" if found == record.UNKNOWN else found


def base_pin_at(head: str) -> str:
    """The checksum of the tarball BASE pins as of the lab's `head`: what
    names the base across unpacks (the id of build/linux's `base` commit
    changes with every `make tree`, its date being the unpack's). ""
    when `head` or its BASE cannot be read."""
    if not head:
        return ""
    proc = subprocess.run(["git", "show", f"{head}:BASE"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return ""
    try:
        return basemod.parse_base(proc.stdout).sha256
    except LabError:
        return ""


def identity() -> Tuple[str, str]:
    """The pinned base (base_pin_at()) and the lab's HEAD of this
    checkout, to compare with a record's."""
    head = _first_line(["git", "rev-parse", "HEAD"], ROOT)
    return base_pin_at(head), head


def kept_targets(data: object, where: str, full: bool, base: str,
                 head: str) -> List[Dict[str, object]]:
    """The targets an earlier run built (its record, `data`) that a run
    of the same patches/ on the same base may keep: a run cut off, or
    one of other --only targets. LabError if it is not one. Compiler
    versions are not compared: resume on the host that built them."""
    if isinstance(data, dict) and data.get("kind") == "buildtest":
        data = data.get("results")     # the lab's record schema
    if not isinstance(data, dict) or not isinstance(data.get("targets"),
                                                    list):
        raise LabError(f"{where} is not a buildtest record")
    repo = data.get("repo") or {}
    theirs = patches_at(str(repo.get("head") or ""))
    if repo.get("dirty") or not theirs or theirs != patches_at(head):
        raise LabError(f"{where} built other patches/ than this checkout's "
                       "(or a checkout with uncommitted changes)")
    if not base or base_pin_at(str(repo.get("head") or "")) != base:
        raise LabError(f"{where} built on another base")
    if bool(data.get("full")) != full:
        raise LabError(f"{where} was {'' if data.get('full') else 'not '}"
                       "a --full run")
    # A failed target is built again: builds are deterministic, and the
    # failure may have been fixed since (the new record shows it either
    # way).
    return [t for t in data["targets"]
            if isinstance(t, dict) and t.get("ok")]


def run(only: str = "", jobs: int = 1, full: bool = False,
        as_json: bool = False, argv: Sequence[str] = (),
        resume: str = "") -> int:
    """Build every chosen target in base and series; 0 if all pass.
    With `resume` (a record), the chosen targets it built are kept,
    not built again."""
    chosen = select(only)
    if jobs < 1:
        raise LabError(f"--jobs {jobs}: at least 1")
    kept: List[Dict[str, object]] = []
    if resume:
        kept = kept_targets(record.read_json(Path(resume)), resume, full,
                            *identity())
        names = {t.name for t in chosen}
        kept = [t for t in kept if t.get("name") in names]
        done_names = {t.get("name") for t in kept}
        chosen = [t for t in chosen if t.name not in done_names]
    stages = ["tree", "kernel"] + [s for t in chosen for s in t.needs]
    packages.ensure(list(dict.fromkeys(stages)))
    started = time.time()
    stamp = record.now()
    sides = prepare_trees()
    touched = changed_files(sides[1])
    say = sys.stderr if as_json else sys.stdout
    env = environment(chosen, sides)
    earlier = float(sum(float(t.get("seconds") or 0) for t in kept))
    results: List[Result] = []
    path: List[Path] = []

    def write() -> dict:
        """The record as it stands (the lab's record schema, kind
        buildtest): rewritten after every target, so a run cut off
        after hours keeps what it built."""
        built = kept + [r.to_dict() for r in results]
        failed = sum(not t.get("ok") for t in built)
        data = {"argv": list(argv),
                "seconds": round(time.time() - started + earlier),
                "jobs": jobs, "full": full, "touched": touched, **env,
                "targets": built,
                "passed": len(built) - failed, "failed": failed,
                "complete": len(results) == len(chosen),
                "not_built": [t.name for t in chosen[len(results):]],
                "resumed_from": resume, "kept": len(kept)}
        rec = record.make("buildtest", not failed, data, stamp)
        if path:
            record.rewrite(rec, path[0])
        else:
            path.append(record.save(rec))
        return data

    write()
    print(f"lab: buildtest: record in {path[0]}", file=sys.stderr)
    for target in chosen:
        result = compare_target(target, sides, jobs, full, touched)
        results.append(result)
        write()
        print("\n".join(result.lines()), file=say, flush=True)
    data = write()
    failed = data["failed"]
    print(f"{data['passed']} passed, {failed} failed"
          + (f" ({len(kept)} kept from {resume})" if kept else ""),
          file=say, flush=True)
    if as_json:
        print(json.dumps(record.load(path[0]).to_dict(), indent=1))
    return 1 if failed else 0


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]"
               ) -> None:
    p = sub.add_parser("buildtest", help="build base and series for many "
                       "configs and arches; fail on a build error or a new "
                       "warning (long)")
    p.add_argument("--only", default="", metavar="NAME[,NAME]",
                   help="these targets (shell patterns allowed, e.g. "
                   "'x86_64-rand-*')")
    p.add_argument("--list", action="store_true",
                   help="print the targets and build nothing")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="make -j (default: host CPUs)")
    p.add_argument("--full", action="store_true",
                   help="cross targets build vmlinux, not only the "
                   "generic hotplug objects")
    p.add_argument("--json", action="store_true",
                   help="print the run's record (as written to results/) "
                   "on stdout, the verdict lines on stderr")
    p.add_argument("--resume", metavar="RECORD",
                   help="keep the targets this earlier run built (cut off, "
                   "or other --only targets; same patches/ and base) and "
                   "build only the others")


def command(args: argparse.Namespace) -> int:
    if args.list:
        print(render_list(select(args.only)))
        return 0
    return run(args.only, args.jobs, args.full, args.json, sys.argv,
               args.resume or "")
