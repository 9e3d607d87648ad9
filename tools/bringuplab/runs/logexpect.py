"""What a kept console log was expected to show, from the log alone:
`bringup judge LOG` re-judges any log the lab wrote (build/logs, a CI
run's, tests/logs) without the run that wrote it.

The lab's logs start with QEMU's command line (boot.py), which names
the machine and the kernel's command line, and are named after their
boot's label. A log whose label names a matrix or soak entry with the
same command line is judged as that entry; any other by what its
command line asks for (plan, serial mode, maxcpus=, nr_cpus=, nosmp,
nosmt, an injected fault). The bringup mode is checked for an entry's
log, and for any other only when its kernel printed a mode line (a
base kernel prints none).
"""
import json
import re
import shlex
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from bringuplab.build import tree
from bringuplab.guest import boot, machine as machmod, machinespec
from bringuplab.report import record
from bringuplab.runs import matrix, soak, sysboot
from bringuplab.verdict import judge, parse
from bringuplab.errors import LabError
from bringuplab.verdict.result import BootResult, judged

# boot.run names a log LABEL-YYYYmmdd-HHMMSS-PID.log; a soak rerun's
# label ends in #N.
LOG_NAME = re.compile(r"^(.+?)(?:#\d+)?-(\d{8}-\d{6})-\d+\.log$")
# What the verdict of a log depends on besides the log: the judge, the
# parser, and the expectations of entries (matrix, soak, this file).
RULE_FILES = ("verdict/judge.py", "verdict/parse.py", "runs/logexpect.py",
              "runs/matrix.py", "runs/soak.py")
SERIAL_PARAMS = (matrix.SERIAL, "no_parallel_bringup", "nosmp")


@dataclass(frozen=True)
class Kept:
    """A console log and what it was expected to show."""
    path: Path
    entry: matrix.Entry
    known: bool                       # a matrix or soak entry's log
    expect: judge.Expect


def qemu_argv(text: str) -> List[str]:
    """QEMU's command line from the log's first line."""
    first = text.partition("\n")[0]
    if not first.startswith("# qemu-system-x86_64 "):
        raise LabError("not a console log of the lab: its first line is "
                       "not QEMU's command line")
    command = first.removeprefix("# ")
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def option(argv: List[str], name: str) -> List[str]:
    """The values of every `name` option."""
    return [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == name]


def kernel_params(argv: List[str]) -> List[str]:
    """The kernel's command line (-append), also when the log's header
    did not quote it."""
    if "-append" not in argv:
        return []
    rest = argv[argv.index("-append") + 1:]
    if rest and " " in rest[0]:
        return rest[0].split()
    out = []
    for word in rest:
        if word.startswith("-"):
            break
        out.append(word)
    return out


def machine_of(argv: List[str]) -> machmod.Machine:
    """The machine QEMU was given (machine.Machine.qemu_argv, read
    back)."""
    smp = option(argv, "-smp")
    if not smp:
        raise LabError("QEMU's command line in the log has no -smp")
    count, _, rest = smp[0].partition(",")
    fields = {key: value for key, _, value in
              (f.partition("=") for f in rest.split(",") if f)}
    cpu = option(argv, "-cpu")[0] if option(argv, "-cpu") else ""
    high = sum(d.split(",")[0].endswith("-x86_64-cpu")
               for d in option(argv, "-device"))
    tcg = "multi" if "thread=multi" in " ".join(option(argv, "-accel")) \
        else "single"
    if not {"sockets", "cores", "threads"} <= set(fields):
        raise LabError(f"QEMU's -smp in the log ({smp[0]}) does not name "
                       "sockets, cores and threads, as the lab's always do")
    return machmod.Machine(
        int(count) + high, int(fields["sockets"]),
        int(fields["cores"]), int(fields["threads"]),
        # one node unless -numa options say how many
        len(option(argv, "-numa")) or 1,
        "amd" if "AuthenticAMD" in cpu else "intel", "x2apic=on" in cpu,
        tcg, high=high)


def param(params: List[str], name: str) -> Optional[str]:
    """The value of the last `name=` kernel parameter, None without."""
    values = [p.partition("=")[2] for p in params
              if p.startswith(name + "=")]
    return values[-1] if values else None


def number(params: List[str], name: str) -> Optional[int]:
    """The value of a numeric kernel parameter; None without (or if the
    kernel would not read it as a number either)."""
    value = param(params, name)
    return int(value) if value and value.isdigit() else None


def before(plan: Tuple[str, ...], first: str, then: str) -> bool:
    """`first` runs before `then` in the plan."""
    return first in plan and (then not in plan
                              or plan.index(first) < plan.index(then))


def derived(label: str, mach: machmod.Machine, params: List[str]
            ) -> matrix.Entry:
    """The entry a boot of `mach` with these kernel parameters stands
    for."""
    plan = tuple((param(params, "lab.plan") or "cpus").split(","))
    parallel = not set(SERIAL_PARAMS) & set(params)
    fault = re.fullmatch(r"([a-z]+):(\d+)", param(params, "smpboot_fault")
                         or "")
    if fault:
        base = matrix.fault(fault.group(1), int(fault.group(2)), mach.cpus,
                            mach.tcg, parallel)
    else:
        base = matrix.Entry(label, machinespec.of(mach), plan=plan,
                            parallel=parallel)
    online, boot_cpus = base.expect_online, base.expect_boot
    maxcpus = number(params, "maxcpus")
    if "nosmp" in params or maxcpus == 0:
        online = boot_cpus = 1
    elif maxcpus and maxcpus < mach.cpus:
        boot_cpus = maxcpus
        online = None if before(plan, "online-all", "cpus") else boot_cpus
    nr_cpus = number(params, "nr_cpus")
    if nr_cpus and nr_cpus < mach.cpus:
        online = nr_cpus
    if "nosmt" in params and mach.profile == "intel" and mach.threads > 1 \
            and not before(plan, "smt-on", "cpus"):
        online = mach.cpus // mach.threads
    return replace(base, name=label, machine=machinespec.of(mach),
                   plan=plan, append=" ".join(params),
                   expect_online=online, expect_boot=boot_cpus)


def known_entries() -> Dict[str, List[matrix.Entry]]:
    """Every matrix and soak entry by name (the soak's random machines
    only the fixed ones: the others are derived from their logs)."""
    out: Dict[str, List[matrix.Entry]] = {}
    every = [e for todo in matrix.MATRICES.values() for e in todo]
    every += [e for todo in soak.fixed().values() for e in todo]
    every += soak.fault_entries() + soak.high_apic_entries()
    every += [e for flavour in soak.DEBUG_FLAVOURS
              for e in soak.debug_entries(flavour)]
    for entry in every:
        out.setdefault(entry.name, []).append(entry)
    return out


def user_params(params: List[str]) -> List[str]:
    """The kernel parameters an entry appends (boot.BootSpec.cmdline)."""
    lab = set(boot.BASE_CMDLINE.split())
    return [p for p in params if p not in lab
            and not p.startswith("lab.plan=")]


def entry_of(path: Path, mach: machmod.Machine, params: List[str]
             ) -> Tuple[matrix.Entry, bool]:
    """The entry that wrote the log, and whether it is a known one: by
    its label, when the machine and command line are the entry's."""
    name = LOG_NAME.match(path.name)
    label = name.group(1) if name else path.stem
    for entry in known_entries().get(label, []):
        if entry.machine.make() == mach \
                and entry.append.split() == user_params(params):
            return entry, True
    return derived(label, mach, params), False


def facts_of(path: Path) -> parse.Facts:
    """The log's facts; a monitor dump beside a log from before the
    lab marked its kills (boot.run saves one only when it kills QEMU)
    makes it a hang."""
    facts = parse.parse(path.read_text(errors="replace"))
    dumps = [d for d in (path.with_suffix(".monitor"),
                         path.with_suffix(".monitor.gz")) if d.is_file()]
    if dumps and not facts.killed:
        facts.killed = f"QEMU monitor state in {dumps[0]}"
    return facts


def read(path: Path) -> Tuple[Kept, parse.Facts]:
    if not path.is_file():
        raise LabError(f"no console log at {path}")
    facts = facts_of(path)
    argv = qemu_argv(facts.text)
    mach = machine_of(argv)
    params = kernel_params(argv)
    entry, known = entry_of(path, mach, params)
    modes = bool(tree.series_files()) if known else \
        bool(facts.mode or facts.mode_reason)
    want = matrix.expect(entry, modes)
    if entry.name.startswith(sysboot.LABEL):
        # A Debian image's check prints no topology (sysboot.spec)
        want = replace(want, topologies=())
    return Kept(path, entry, known, want), facts


def rejudge(path: Path) -> Tuple[Kept, BootResult]:
    kept, facts = read(path)
    return kept, judged(facts, kept.expect, str(path))


def written(path: Path) -> Optional[datetime]:
    """When the log was written: the stamp boot.run put in its name, in
    the host's local time (None without one: a copied file's time says
    nothing)."""
    named = LOG_NAME.match(path.name)
    if not named:
        return None
    return datetime.strptime(named.group(2), "%Y%m%d-%H%M%S") \
        .astimezone(timezone.utc)


def rules_changed() -> Optional[datetime]:
    """When the lab's rules last changed (git), None if unknown."""
    files = [f"tools/bringuplab/{name}" for name in RULE_FILES]
    when = record.first_line(["git", "-C", str(record.ROOT), "log", "-1",
                              "--format=%cI", "--", *files])
    try:
        return datetime.fromisoformat(when)
    except ValueError:
        return None


def rules_line(log_time: Optional[datetime],
               rules_time: Optional[datetime]) -> str:
    """Whether today's rules judged a log older than they are."""
    if log_time is None:
        return ("  rules: today's; when the log was written is unknown "
                "(no time in its name)")
    log = f"{log_time:%Y-%m-%d %H:%M} UTC"
    if rules_time is None:
        return (f"  rules: today's, on a log written {log}; when they last "
                "changed is unknown (no git history)")
    if rules_time > log_time:
        rules = f"{rules_time.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC"
        return (f"  rules: today's, changed {rules}, after the log was "
                f"written ({log}): the verdict when it ran may differ")
    return f"  rules: today's, unchanged since the log was written ({log})"


def render(kept: Kept, res: BootResult) -> str:
    want = kept.expect
    # A hung boot may not have got as far as either figure
    online = "-" if res.cpus_online is None else res.cpus_online
    took = "-" if res.bringup_ms is None else res.bringup_ms
    lines = [f"{res.verdict}: {online}/{want.online} CPUs online,"
             f" mode {res.mode or '-'}, bringup {took} ms, "
             f"log {kept.path}",
             f"  judged as {'entry' if kept.known else 'a boot of'} "
             f"{kept.entry.name}: {want.vcpus} vCPUs, {want.boot} brought "
             f"up, {want.online} online, plan {','.join(want.plan)}, mode "
             f"{want.mode or 'unchecked'}, {len(want.present)} lines "
             f"wanted, {len(want.absent)} forbidden"]
    lines.append(rules_line(written(kept.path), rules_changed()))
    lines += [f"  {rule}: {why}" for rule, why in zip(res.rules,
                                                       res.reasons)]
    return "\n".join(lines)


def to_json(kept: Kept, res: BootResult) -> str:
    changed, when = rules_changed(), written(kept.path)
    return json.dumps({
        "log": str(kept.path), "verdict": res.verdict,
        "reasons": [{"rule": rule, "text": why}
                    for rule, why in zip(res.rules, res.reasons)],
        "entry": kept.entry.name, "known_entry": kept.known,
        "written": when.isoformat() if when else None,
        "rules_changed": changed.isoformat() if changed else None,
        "expect": asdict(kept.expect), "facts": res.to_dict()}, indent=1)


def exit_code(res: BootResult) -> int:
    """0 pass, 1 fail or hang, 3 infrastructure error."""
    return {judge.PASS: 0, judge.INFRA: 3}.get(res.verdict, 1)
