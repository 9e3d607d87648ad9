"""`bringup serialwork`: the work done one AP at a time, counted in
instructions per CPU by a TCG plugin (tools/plugin/serialwork.c), the
same way on every kernel; docs/serialwork.md says what is counted.

Per boot the plugin writes a trace (parse()); windows() cuts it at the
markers, phases() sums it per phase from the plugin's per-block profile,
symbolized with the kernel's System.map; run() boots the variants N
times each, interleaved, and keeps a record (kind "serialwork") that
render() turns into tables.
"""
import bisect
import re
import shutil
import subprocess
import tarfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from bringuplab.build import kernel, variants
from bringuplab.guest import boot, initramfs
from bringuplab.report import record
from bringuplab.runs import bench
from bringuplab.errors import InfraError, UsageError
from bringuplab.guest.machinespec import SERVER, MachineSpec
from bringuplab.paths import BUILD, LOGS, ROOT
from bringuplab.progress import Progress, say
from bringuplab.report.serialwork_tables import B_AP, B_CPU0_OTHER, B_FIRST, \
    B_UNKNOWN, B_WINDOW, BUCKET_NAMES, CPU0_OTHER, LIMIT, NROLES, PARTS, \
    SERIAL, SPIN, UNKNOWN_PHASE

PLUGIN_SRC = ROOT / "tools" / "plugin" / "serialwork.c"
PLUGIN_DIR = BUILD / "plugin"
# QEMU's plugin API header, per QEMU source version (QEMU's code: kept
# out of git, fetched with `apt-get source` when missing)
HEADER_DIR = BUILD / "qemu-plugin-api"
SRC_SOURCE = Path("/etc/apt/sources.list.d/bringup-lab-backports-src.sources")

# The markers, by role (plugin: start / window / end / note). The window
# marker is the CPUHP_BRINGUP_CPU startup callback: bringup_cpu() in 6.1
# and the series, cpuhp_bringup_ap() in 6.12 (HOTPLUG_SPLIT_STARTUP); its
# first argument (rdi) is the CPU being brought up.
START = "bringup_nonboot_cpus"
WINDOW_SYMBOLS = ("bringup_cpu", "cpuhp_bringup_ap")
END = "native_smp_cpus_done"
NOTE = "notify_cpu_starting"     # on the AP itself, rdi = its number
PERCPU = "__per_cpu_offset"


# Calls kept apart from the serialized work, by group, each from the
# function's entry to its return: they count instructions by time, not
# by work (docs/serialwork.md says why each). "task": the calling task's
# own blocks (callees included; other tasks the CPU switches to meanwhile
# still count); "cpu": every block of the CPU until the return (interrupt
# entry points: the handler moves to the IRQ stack).
CALLS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "waits (schedule)": ("task", ("schedule", "__schedule")),
    "idle loop": ("task", ("do_idle",)),
    # every system vector (timer, IPIs: whether a wakeup takes an IPI
    # depends on whether the CPU was halted or polling) and the external
    # ones' stubs (push vector, jmp asm_common_interrupt): at their entry
    # the interrupted RIP is at [rsp]
    "interrupts": ("cpu", ("asm_sysvec_*",
                           "irq_entries_start..spurious_entries_start",
                           "spurious_entries_start..asm_exc_divide_error")),
    "TSC warp test": ("task", ("check_tsc_warp",)),
    "delay calibration": ("task", ("calibrate_delay",)),
}
# Single functions kept apart, by group (no callees)
APART: Dict[str, Tuple[str, ...]] = {}


# The variants a run boots without --variants
DEFAULT_VARIANTS = ("base-serial", "upstream-parallel", "v1-parallel",
                    "v2-parallel", "ours-parallel")
# Functions per bucket kept in a record (the rest summed as "(other)")
KEEP_FUNCTIONS = 60


# ---------------------------------------------------------------------
# The plugin: header, build, arguments

def qemu_source_version() -> str:
    """Source version of the installed qemu-system-x86 (Debian)."""
    out = record.first_line(["dpkg-query", "-W", "-f=${source:Version}",
                             "qemu-system-x86"])
    if out == record.UNKNOWN:
        raise InfraError("qemu-system-x86 is not installed: run "
                         "`bringup setup`")
    return out


def upstream_version(debian_version: str) -> str:
    """'1:10.0.2+ds-2+deb13u1~bpo12+1' -> '10.0.2'."""
    ver = debian_version.split(":", 1)[-1]
    return re.split(r"[+~-]", ver, maxsplit=1)[0]


def source_text(mirror: str, suite: str, signed_by: Optional[str]) -> str:
    """The deb-src stanza of the backports, for `apt-get source`."""
    text = (f"Types: deb-src\nURIs: {mirror}\nSuites: {suite}\n"
            "Components: main\n")
    if signed_by:
        text += f"Signed-By: {signed_by}\n"
    return text


def _apt_source_line() -> None:
    """Add the backports deb-src source if it is missing."""
    if SRC_SOURCE.exists():
        return
    from bringuplab.host import apt_sources, packages
    suite = packages.BACKPORTS["qemu-system-x86"]
    found = apt_sources.mirror_for(apt_sources.read_all(), suite)
    if found is None:
        raise InfraError(f"no apt source names a mirror to take {suite}'s "
                         "QEMU source from")
    say(f"serialwork: adding the apt source {SRC_SOURCE} (deb-src "
        f"{suite}, {found.uri}) for QEMU's plugin header")
    SRC_SOURCE.write_text(source_text(found.uri, suite, found.signed_by))
    subprocess.run(["apt-get", "update", "-qq"], capture_output=True,
                   check=False)


def header(version: Optional[str] = None) -> Path:
    """QEMU's qemu-plugin.h of the installed QEMU's source version,
    fetched (apt-get source --download-only, then only the header out of
    the upstream tarball) when missing."""
    version = version or qemu_source_version()
    dest = HEADER_DIR / version.replace(":", "_").replace("~", "_")
    hdr = dest / "qemu-plugin.h"
    if hdr.is_file():
        return hdr
    _apt_source_line()
    scratch = dest / "src"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    say(f"serialwork: fetching the source of qemu {version} for "
        "include/qemu/qemu-plugin.h")
    # The .dsc may be gone from the mirror while the upstream tarball it
    # names is still served: the tarball is all that is needed.
    proc = subprocess.run(["apt-get", "source", "--download-only", "-qq",
                           f"qemu={version}"], cwd=scratch,
                          capture_output=True, text=True, check=False)
    tars = sorted(scratch.glob("qemu_*.orig.tar.*"))
    if not tars:
        last = (proc.stderr or proc.stdout).strip().splitlines()
        raise InfraError(f"apt-get source qemu={version} got no upstream "
                         f"tarball: {last[-1] if last else proc.returncode}")
    want = f"qemu-{upstream_version(version)}/include/qemu/qemu-plugin.h"
    try:
        with tarfile.open(tars[0]) as tar:
            member = tar.getmember(want)
            data = tar.extractfile(member)
            if data is None:
                raise KeyError(want)
            hdr.write_bytes(data.read())
    except (tarfile.TarError, KeyError, OSError) as err:
        raise InfraError(f"no {want} in {tars[0].name}: {err}") from None
    shutil.rmtree(scratch, ignore_errors=True)
    return hdr


def api_version(hdr_text: str) -> int:
    """QEMU_PLUGIN_VERSION of a qemu-plugin.h, 0 if none."""
    found = re.search(r"#define\s+QEMU_PLUGIN_VERSION\s+(\d+)", hdr_text)
    return int(found.group(1)) if found else 0


def build_plugin() -> Path:
    """serialwork.so, built into build/plugin/ against the installed
    QEMU's header (rebuilt when the source or the header is newer)."""
    hdr = header()
    if api_version(hdr.read_text(errors="replace")) < 2:
        raise InfraError(f"{hdr}: no plugin API version 2 or later "
                         "(qemu_plugin_read_register)")
    so = PLUGIN_DIR / f"serialwork-{hdr.parent.name}.so"
    if so.is_file() and so.stat().st_mtime >= max(
            PLUGIN_SRC.stat().st_mtime, hdr.stat().st_mtime):
        return so
    PLUGIN_DIR.mkdir(parents=True, exist_ok=True)
    glib = subprocess.run(["pkg-config", "--cflags", "glib-2.0"],
                          capture_output=True, text=True, check=False)
    if glib.returncode != 0:
        raise InfraError("pkg-config finds no glib-2.0: run `bringup "
                         "setup` (libglib2.0-dev)")
    argv = ["gcc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror",
            *glib.stdout.split(), f"-I{hdr.parent}", str(PLUGIN_SRC),
            "-o", str(so)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise InfraError(f"plugin build failed: {proc.stderr.strip()}")
    return so


def symbols(system_map: str) -> Dict[str, int]:
    """name -> address of System.map (the first of equal names)."""
    out: Dict[str, int] = {}
    for line in system_map.splitlines():
        parts = line.split()
        if len(parts) == 3:
            out.setdefault(parts[2], int(parts[0], 16))
    return out


def markers(syms: Dict[str, int]) -> List[Tuple[str, int, str]]:
    """(name, address, role) of the markers in a kernel."""
    window = next((s for s in WINDOW_SYMBOLS if s in syms), None)
    missing = [n for n in (START, END, NOTE, PERCPU) if n not in syms]
    if window is None or missing:
        raise InfraError("the kernel's System.map lacks "
                         + ", ".join(missing + ([] if window else
                                                ["/".join(WINDOW_SYMBOLS)])))
    return [(START, syms[START], "start"), (window, syms[window], "window"),
            (END, syms[END], "end"), (NOTE, syms[NOTE], "note")]


def expand(funcs: Sequence[str], syms: Dict[str, int]) -> List[str]:
    """The entry points that names stand for, as the plugin takes them:
    NAME (its address), PREFIX* (every symbol starting so), A..B (every
    block starting in [A, B)); names the kernel lacks are skipped."""
    out = []
    for name in funcs:
        if ".." in name:
            start, end = name.split("..")
            if start in syms and end in syms:
                out.append(f"{syms[start]:x}-{syms[end]:x}")
        elif name.endswith("*"):
            out += [f"{syms[s]:x}" for s in sorted(syms)
                    if s.startswith(name[:-1])]
        elif name in syms:
            out.append(f"{syms[name]:x}")
    return out


def plugin_arg(so: Path, out: Path, cpus: int, syms: Dict[str, int]) -> str:
    """The value of QEMU's -plugin option."""
    parts = [str(so), f"out={out}", f"cpus={cpus}",
             f"percpu={syms[PERCPU]:x}", "profile=on"]
    parts += [f"marker={n}:{a:x}:{r}" for n, a, r in markers(syms)]
    parts += [f"apart={g}:{entry}:{kind}" for g, (kind, funcs) in
              enumerate(CALLS.values()) for entry in expand(funcs, syms)]
    return ",".join(parts)


# ---------------------------------------------------------------------
# The trace

@dataclass
class Event:
    seq: int
    cpu: int                       # -1: unknown
    name: str
    rdi: int
    # (total, pause, apart) per CPU 0..N-1, then the unknown slot
    counts: List[Tuple[int, int, int]]


@dataclass
class Block:
    bucket: int
    pc: int
    insns: int
    execs: int
    pause: bool


@dataclass
class Trace:
    cpus: int
    roles: Dict[str, str]          # marker name -> role
    events: List[Event]
    blocks: List[Block]
    done: bool                     # the end marker was reached


ROLE_OF = {"0": "note", "1": "start", "2": "window", "3": "end"}


def parse(text: str) -> Trace:
    """The plugin's output; InfraError if a line is not its own."""
    cpus, roles = 0, {}
    events: List[Event] = []
    blocks: List[Block] = []
    done = False
    for num, line in enumerate(text.splitlines(), 1):
        word = line.split()
        try:
            if not word or word[0] in ("G", "!"):
                continue
            if word[0] == "#":
                if "cpus" in word:
                    cpus = int(word[word.index("cpus") + 1])
            elif word[0] == "M":
                roles[word[1]] = ROLE_OF[word[3]]
            elif word[0] == "E":
                counts = [(int(t), int(p), int(a)) for t, p, a in
                          (c.split(":") for c in word[5:])]
                events.append(Event(int(word[1]), int(word[2]), word[3],
                                    int(word[4], 16), counts))
            elif word[0] == "P":
                blocks.append(Block(int(word[1]), int(word[2], 16),
                                    int(word[3]), int(word[4]),
                                    word[5] == "1"))
            elif word[0] == "D":
                done = True
            else:
                raise ValueError(word[0])
        except (ValueError, IndexError, KeyError) as err:
            raise InfraError(f"serialwork trace line {num} unreadable: "
                             f"{line[:80]!r} ({err})") from None
    return Trace(cpus, roles, events, blocks, done)


@dataclass
class Window:
    """The control CPU's window for one AP: from the window marker with
    rdi = cpu to the next window marker or the end."""
    cpu: int
    control: int                   # CPU 0's counted (non-PAUSE) insns
    ap: int                        # the AP's own
    control_pause: int
    ap_pause: int
    control_apart: int
    ap_apart: int


@dataclass
class Cut:
    first_pass: int                # CPU 0 from start to the first window
    first_pass_pause: int
    first_pass_apart: int
    windows: List[Window]


def _delta(a: Event, b: Event, cpu: int) -> Tuple[int, int, int]:
    return (b.counts[cpu][0] - a.counts[cpu][0],
            b.counts[cpu][1] - a.counts[cpu][1],
            b.counts[cpu][2] - a.counts[cpu][2])


def windows(trace: Trace) -> Cut:
    """The first pass and the windows, by the event counters;
    InfraError if the trace does not hold a whole bringup."""
    marks = [e for e in trace.events if trace.roles.get(e.name) != "note"]
    starts = [i for i, e in enumerate(marks)
              if trace.roles.get(e.name) == "start"]
    ends = [i for i, e in enumerate(marks)
            if trace.roles.get(e.name) == "end"]
    if not starts or not ends or ends[0] < starts[0] or not trace.done:
        raise InfraError("the trace has no bringup from start to end "
                         "marker (did the boot get past "
                         f"{END}?)")
    marks = marks[starts[0]:ends[0] + 1]
    if any(e.cpu != 0 for e in marks):
        raise InfraError("a marker ran on another CPU than CPU 0")
    wins = marks[1:-1]
    if not wins:
        raise InfraError("no window marker between start and end")
    first = _delta(marks[0], wins[0], 0)
    out = []
    for here, there in zip(wins, wins[1:] + [marks[-1]]):
        cpu = here.rdi
        if not 0 < cpu < trace.cpus:
            raise InfraError(f"a window for CPU {cpu} of {trace.cpus}")
        ctl, ctl_p, ctl_a = _delta(here, there, 0)
        ap, ap_p, ap_a = _delta(here, there, cpu)
        out.append(Window(cpu, ctl, ap, ctl_p, ap_p, ctl_a, ap_a))
    return Cut(first[0], first[1], first[2], out)


def cpu_map_ok(trace: Trace) -> List[str]:
    """Every notify_cpu_starting(n) ran on the CPU whose per-CPU offset
    is n's: the problems, if any."""
    return [f"{e.name}({e.rdi}) ran on CPU {e.cpu}" for e in trace.events
            if trace.roles.get(e.name) == "note" and e.cpu != e.rdi]


class Symbols:
    """The text symbols of a System.map, to name a block's function."""

    def __init__(self, system_map: str) -> None:
        pairs = []
        for line in system_map.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                pairs.append((int(parts[0], 16), parts[2]))
        pairs.sort()
        self.addrs = [a for a, _ in pairs]
        self.names = [n for _, n in pairs]

    def name(self, pc: int) -> str:
        i = bisect.bisect_right(self.addrs, pc) - 1
        return self.names[i] if i >= 0 else f"{pc:x}"


@dataclass
class BootWork:
    """One boot's figures, totals over its APs (per AP: / aps)."""
    aps: int
    phases: Dict[str, int]
    # bucket name -> function -> instructions (non-PAUSE blocks)
    functions: Dict[str, Dict[str, int]]
    windows: List[List[int]]       # [cpu, control, ap] per window
    problems: List[str] = field(default_factory=list)


def apart_of(func: str, apart: Dict[str, Tuple[str, ...]]) -> str:
    return next((group for group, funcs in apart.items()
                 if func in funcs), "")


def analyse(trace: Trace, syms: Symbols,
            calls: Optional[Dict[str, object]] = None,
            apart: Optional[Dict[str, Tuple[str, ...]]] = None) -> BootWork:
    """The phases of one boot: the profile's blocks by bucket, with the
    calls kept apart (the CALLS groups the boot was traced with), PAUSE
    blocks and the APART functions taken out; checked against the
    counters of the markers."""
    calls = CALLS if calls is None else calls
    apart = APART if apart is None else apart
    groups = list(calls)
    cut = windows(trace)
    phases: Dict[str, int] = {name: 0 for name in PARTS}
    phases.update({SPIN: 0, UNKNOWN_PHASE: 0, CPU0_OTHER: 0})
    phases.update({group: 0 for group in groups})
    phases.update({group: 0 for group in apart})
    funcs: Dict[str, Dict[str, int]] = {}
    by_bucket = {B_FIRST: PARTS[0], B_WINDOW: PARTS[1], B_AP: PARTS[2]}
    for blk in trace.blocks:
        insns = blk.insns * blk.execs
        role, call = blk.bucket % NROLES, blk.bucket // NROLES - 1
        if role == B_UNKNOWN:
            phases[UNKNOWN_PHASE] += insns
            continue
        if role == B_CPU0_OTHER:
            phases[CPU0_OTHER] += insns
            per = funcs.setdefault(BUCKET_NAMES[role], {})
            func = syms.name(blk.pc)
            per[func] = per.get(func, 0) + insns
            continue
        if role not in by_bucket:
            continue
        if call >= 0:
            phases[groups[call] if call < len(groups)
                   else f"apart group {call}"] = phases.get(
                       groups[call] if call < len(groups)
                       else f"apart group {call}", 0) + insns
            continue
        if blk.pause:
            phases[SPIN] += insns
            continue
        func = syms.name(blk.pc)
        group = apart_of(func, apart)
        phases[group or by_bucket[role]] += insns
        per = funcs.setdefault(BUCKET_NAMES[role], {})
        per[func] = per.get(func, 0) + insns
    phases[SERIAL] = sum(phases[p] for p in PARTS)
    problems = cpu_map_ok(trace)
    # The profile and the markers' counters count the same blocks
    counted = {PARTS[0]: cut.first_pass,
               PARTS[1]: sum(w.control for w in cut.windows),
               PARTS[2]: sum(w.ap for w in cut.windows)}
    for name, bucket in ((PARTS[0], B_FIRST), (PARTS[1], B_WINDOW),
                         (PARTS[2], B_AP)):
        prof = sum(b.insns * b.execs for b in trace.blocks
                   if b.bucket == bucket and not b.pause)
        if prof != counted[name]:
            problems.append(f"{name}: profile {prof} != counters "
                            f"{counted[name]}")
    seen = sorted(w.cpu for w in cut.windows)
    if seen != list(range(1, trace.cpus)):
        problems.append(f"windows for {len(seen)} CPUs, not CPUs 1-"
                        f"{trace.cpus - 1} once each")
    return BootWork(len(cut.windows), phases, _top(funcs),
                    [[w.cpu, w.control, w.ap] for w in cut.windows],
                    problems)


def _top(funcs: Dict[str, Dict[str, int]]) -> Dict[str, Dict[str, int]]:
    """The KEEP_FUNCTIONS biggest functions per bucket, the rest summed
    as "(other)"."""
    out = {}
    for bucket, per in funcs.items():
        ranked = sorted(per.items(), key=lambda kv: (-kv[1], kv[0]))
        keep = dict(ranked[:KEEP_FUNCTIONS])
        rest = sum(v for _, v in ranked[KEEP_FUNCTIONS:])
        if rest:
            keep["(other)"] = rest
        out[bucket] = keep
    return out


# ---------------------------------------------------------------------
# Runs and records

def pick(names: Optional[str]) -> List[variants.Variant]:
    """The bench variants a comma list names (DEFAULT_VARIANTS if None),
    in the list's order."""
    wanted = [n.strip() for n in (names or ",".join(DEFAULT_VARIANTS))
              .split(",") if n.strip()]
    known = {var.name: var for var in variants.VARIANTS}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise UsageError(f"unknown variant '{unknown[0]}' (known: "
                         f"{', '.join(known)})")
    if not wanted:
        raise UsageError("--variants names no variant")
    return [known[n] for n in dict.fromkeys(wanted)]


def kernel_of(which: str, config: str = "guest") -> kernel.Kernel:
    """The kernel a variant names, built with flavour `config` by
    bench._build; but ours with the guest config is the kernel as it is
    in build/out-guest (not rebuilt: the series may be changing under
    build/linux)."""
    if which == "ours" and config == "guest":
        kern = kernel.given(None)
        if not kern.image.is_file():
            raise InfraError(f"no kernel at {kern.image}: run `bringup "
                             "kernel`")
        record.BUILT["guest"] = kern.config
        return kern
    return bench._build(which, config)


def boot_one(var: variants.Variant, kern: kernel.Kernel, spec: MachineSpec,
             initrd: Path, so: Path, rep: int) -> dict:
    """One boot with the plugin; its sample (a dict for the record)."""
    system_map = kern.system_map.read_text()
    syms = symbols(system_map)
    LOGS.mkdir(parents=True, exist_ok=True)
    trace_path = LOGS / f"serialwork-{var.name}-{spec.cpus}-r{rep}.trace"
    bspec = boot.BootSpec(spec.make(boot.kernel_nr_cpus(kern)), kern.image,
                          initrd, var.append, ["cpus"],
                          label=f"serialwork-{var.name}-{spec.cpus}",
                          qemu_extra=["-plugin", plugin_arg(
                              so, trace_path, spec.cpus, syms)],
                          # only the time limit (120 + 6 s per vCPU) ends
                          # a boot: the plugin slows the guest, and 6.12
                          # prints the CPUs of a node it brings up in one
                          # pass as one console line, which at 256 vCPUs
                          # takes longer than boot.SILENCE_S to complete
                          silence=0)
    res = boot.run(bspec, quiet=True)
    sample = {"variant": var.name, "rep": rep, "verdict": res.verdict,
              "mode": res.mode, "log": res.log, "trace": str(trace_path)}
    try:
        work = analyse(parse(trace_path.read_text()), Symbols(system_map))
    except (InfraError, OSError) as err:
        sample["error"] = str(err)
        return sample
    sample.update(asdict(work))
    return sample


def command(spec: MachineSpec, reps: int, variants: List[variants.Variant],
            config: str = "guest") -> str:
    opts = spec.options(SERVER)
    names = [v.name for v in variants]
    return ("tools/bringup serialwork"
            + (f" --reps {reps}" if reps != 3 else "")
            + (f" --config {config}" if config != "guest" else "")
            + ("" if tuple(names) == DEFAULT_VARIANTS
               else " --variants " + ",".join(names))
            + "".join(f" {o}" for o in opts))


def run(spec: MachineSpec, reps: int, variants: List[variants.Variant],
        config: str = "guest") -> record.Record:
    """Boot each variant `reps` times, interleaved, every kernel built
    with config flavour `config`; the record, saved in results/."""
    started = record.now()
    so = build_plugin()
    kernels = {which: kernel_of(which, config)
               for which in dict.fromkeys(v.kernel for v in variants)}
    initrd = initramfs.build()
    samples = []
    steps = Progress(reps * len(variants), "serialwork")
    for rep in range(1, reps + 1):
        for var in variants:
            smp = boot_one(var, kernels[var.kernel], spec, initrd, so, rep)
            samples.append(smp)
            serial = smp.get("phases", {}).get(SERIAL)
            aps = smp.get("aps") or 1
            steps.done(f"{var.name} rep {rep}: {smp['verdict']}, "
                       + (f"{serial / aps / 1e3:.0f} k insns serialized "
                          "per AP" if serial is not None
                          else smp.get("error", "no trace")))
    ok = all(s["verdict"] == "pass" and "phases" in s
             and not s.get("problems") for s in samples)
    results = {"machine": spec.name, "cpus": spec.cpus, "reps": reps,
               "config": config,
               "command": command(spec, reps, variants, config),
               "variants": [v.name for v in variants],
               "kernels": {v.name: str(kernels[v.kernel].image)
                           for v in variants},
               "calls": {k: [kind, list(funcs)]
                         for k, (kind, funcs) in CALLS.items()},
               "apart": {k: list(v) for k, v in APART.items()},
               "limit": LIMIT, "samples": samples}
    rec = record.make("serialwork", ok, results, started)
    path = record.save(rec)
    say(f"serialwork: record {path}")
    return rec
