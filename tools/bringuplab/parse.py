"""Console log -> BootResult. Pure functions, tested against real logs."""
import re
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Tuple

_TS = r"^\[\s*(\d+\.\d+)\]\s"
# The first and the last line of the kernel's bringup of the APs.
START_TEXT = r"smp: Bringing up secondary CPUs"
END_TEXT = r"smp: Brought up (\d+) nodes?, (\d+) CPUs?"
BRINGUP_START = re.compile(_TS + ".*" + START_TEXT, re.M)
BRINGUP_END = re.compile(_TS + ".*" + END_TEXT, re.M)
# Printed by the series: "smpboot: parallel bringup of N CPUs" or
# "smpboot: serial bringup of N CPUs", and, when parallel bringup is
# configured but not used, "smpboot: parallel bringup disabled: reason".
MODE = re.compile(r"smpboot: (parallel|serial) bringup of (\d+) CPUs", re.M)
# The series' per-phase report, printed with "bringup_timing":
# "smpboot: bringup timing: kick    84151 us" (one line per phase).
PHASE = re.compile(r"smpboot: bringup timing: ([a-z][a-z-]*)\s+(\d+) us",
                   re.M)
# Its first line: "smpboot: bringup timing: 63 APs, 256612 us from the
# first kick" (TSC time from the first kick to the report).
KICK_TOTAL = re.compile(r"smpboot: bringup timing: \d+ APs?, (\d+) us from "
                        r"the first kick", re.M)
# The first clocksource switch (fs_initcall, clocksource_done_booting()).
# From the end of the bringup to it the boot CPU runs initcalls alone
# while every AP idles, and until then the APs' tick is periodic: no
# clocksource valid for high resolution, so no NOHZ. Under round-robin
# TCG those ticks are emulated on the boot CPU's host thread; this
# interval shows what they cost it.
CLOCKSOURCE_SWITCH = re.compile(
    _TS + r".*clocksource: Switched to clocksource ", re.M)
MODE_REASON = re.compile(r"parallel bringup disabled: (.*?)\s*$", re.M)
# "Setting" when the firmware already handed over in x2APIC mode
APIC_MODE = re.compile(
    r"(?:APIC: )?(?:Switched|Setting) APIC routing to[: ]+(.*?)\.?$", re.M)
LAB_LINE = re.compile(r"^LAB: (.*)$", re.M)
TAP_RESULT = re.compile(r"^(ok|not ok) \d+ (.*?)(?: # (SKIP|.*))?$", re.M)

# What makes a boot fail however many CPUs came up.
SPLATS = [
    ("WARN", re.compile(r"WARNING: CPU: \d+ PID: \d+|"
                        r"------------\[ cut here \]------------")),
    ("BUG", re.compile(r"\bBUG: (?!KASAN)|Oops: |general protection fault|"
                       r"invalid opcode: ")),
    ("panic", re.compile(r"Kernel panic - not syncing")),
    ("lockdep", re.compile(r"possible circular locking dependency|"
                           r"inconsistent lock state|possible recursive "
                           r"locking|lock held when returning|"
                           r"DEBUG_LOCKS_WARN_ON|suspicious RCU usage|"
                           r"irq lock inversion")),
    ("KASAN", re.compile(r"BUG: KASAN|KASAN: ")),
    ("boot-failed", re.compile(r"failed to boot|do_boot_cpu failed|"
                               r"failed to report alive state|"
                               r"CPU\d+: Stuck|Not responding|"
                               r"stuck with the real-mode stack lock|"
                               r"real-mode stack lock held by|"
                               r"did not take its release|"
                               r"did not come up within \d+ seconds")),
    ("stuck", re.compile(r"CPU#\d+ stuck|rcu_\w+ detected stalls|"
                         r"self-detected stall")),
    # A TSC sync test which fails turns the TSC clock off: a slower boot
    # that still brings every CPU up, so it needs a splat of its own. The
    # test runs only while the TSC is trusted, and the first failure is
    # the one which prints this line. (TCG profiles without a constant
    # TSC give it up before the bringup, "due to TSCs unsynchronized":
    # not a failure.)
    ("tsc-off", re.compile(r"Marking TSC unstable due to check_tsc_sync")),
]


@dataclass
class Tap:
    total: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0


@dataclass
class Topology:
    check: str                        # "ok", "cpu3:thread_siblings", ...
    packages: int
    cores: int
    threads: int
    online: int                       # online_count of the same line


@dataclass(frozen=True)
class Expected:
    """The topologies (packages, cores, threads per core) one of which
    a boot's guest must count with all `cpus` online."""
    cpus: int
    counts: Tuple[Tuple[int, int, int], ...]


@dataclass
class BootResult:
    verdict: str                      # pass, fail, hang
    reasons: List[str]
    cpus_expected: int
    cpus_online: Optional[int]
    cpus_brought_up: Optional[int]
    mode: Optional[str]               # parallel, serial, or None
    mode_reason: Optional[str]
    apic: str                         # APIC driver; "flat" if never switched
    bringup_start: Optional[float]
    bringup_end: Optional[float]
    bringup_ms: Optional[float]
    splats: List[str]
    tap: Tap
    steps: Dict[str, str] = field(default_factory=dict)
    done: bool = False
    log: str = ""
    boots: int = 0                    # kernels started (kexec chains: >1)
    brought_up_each: List[int] = field(default_factory=list)
    online_each: List[int] = field(default_factory=list)
    # Offline CPUs not at CPUHP_OFFLINE, "cpu:state" (guest/init).
    offline_stale: List[str] = field(default_factory=list)
    phases_us: Dict[str, int] = field(default_factory=dict)
    kick_total_us: Optional[int] = None
    # Guest ms from "smp: Brought up" to the first clocksource switch
    # after it (CLOCKSOURCE_SWITCH); None if either is missing.
    post_bringup_ms: Optional[float] = None
    # Per "cpus" line: the guest's check of the topology masks ("ok",
    # or the first CPU:mask that disagrees with the IDs) and the
    # packages, cores and threads per core it counted.
    topology_each: List[Topology] = field(default_factory=list)
    # What to check those against; None: unchecked (a log read without
    # its machine, as in states_report).
    machine: Optional[Expected] = None
    # Set by boot.run when asked (hostcpu.py), not read from the log:
    # host wall time of the bringup and the vCPU threads' run time in it.
    host_wall_ms: Optional[float] = None
    host_vcpu_ms: Optional[float] = None

    def to_dict(self) -> dict:
        return asdict(self)


def post_bringup(text: str, end: Optional["re.Match[str]"]
                 ) -> Optional[float]:
    """Guest ms from the end of the bringup (`end`, a BRINGUP_END match)
    to the first clocksource switch after it."""
    if not end:
        return None
    switch = CLOCKSOURCE_SWITCH.search(text, end.end())
    if not switch:
        return None
    return round((float(switch.group(1)) - float(end.group(1))) * 1000.0, 3)


def refused(reason: str, expected: int, log: str) -> BootResult:
    """The result of a boot QEMU would not start: a fail, never a pass."""
    return BootResult("fail", [reason], expected, None, None, None, None,
                      "", None, None, None, [], Tap(), log=log)


def splats(text: str) -> List[str]:
    """'kind: line' for every line that matches a splat pattern."""
    found = []
    for line in text.splitlines():
        for kind, pat in SPLATS:
            if pat.search(line):
                found.append(f"{kind}: {line.strip()[:160]}")
                break
    return found


def excerpt(text: str, after: int = 80, before: int = 5) -> str:
    """The console log around the first splat (or its end, if none): what
    a failed boot's report needs when its log file is out of reach, as a
    CI machine's is."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines)
                  if any(pat.search(line) for _, pat in SPLATS)), None)
    if first is None:
        return "\n".join(lines[-after:]) if after > 0 else ""
    return "\n".join(lines[max(0, first - before):first + after])


def phases(text: str) -> Dict[str, int]:
    """Phase -> microseconds from the series' bringup timing report.

    Only the first kernel's report counts (kexec chains print several).
    """
    out: Dict[str, int] = {}
    for match in PHASE.finditer(text):
        if match.group(1) in out:
            break
        out[match.group(1)] = int(match.group(2))
    return out


def kick_total(text: str) -> Optional[int]:
    """Microseconds from the first kick to the report (first kernel's)."""
    match = KICK_TOTAL.search(text)
    return int(match.group(1)) if match else None


def lab_fields(line: str) -> Dict[str, str]:
    return dict(tok.split("=", 1) for tok in line.split() if "=" in tok)


def tap(text: str) -> Tap:
    res = Tap()
    for match in TAP_RESULT.finditer(text):
        res.total += 1
        if match.group(1) == "not ok":
            res.failed += 1
        elif match.group(3) == "SKIP":
            res.skipped += 1
        else:
            res.passed += 1
    return res


def parse(text: str, cpus_expected: int, timed_out: bool = False,
          log: str = "", plan: Optional[List[str]] = None,
          boot_expected: Optional[int] = None,
          hang: str = "",
          machine: Optional[Expected] = None) -> BootResult:
    """Judge one boot from its console log.

    pass: /init finished, every expected CPU online (per the kernel and
    per sysfs), every requested step passed, no splat.
    hang: QEMU had to be killed at the timeout. fail: everything else.
    boot_expected: CPUs the kernel should bring up itself, if fewer than
    cpus_expected (maxcpus=, then the guest onlines the rest).
    hang: why the lab killed QEMU, for the reasons.
    machine: the topology the guest must see, when it is to be checked:
    every "cpus" line must say its masks agree with the IDs, and with
    every vCPU online name that many packages, cores and threads per
    core.
    """
    start = BRINGUP_START.search(text)
    end = BRINGUP_END.search(text)
    ups = [int(m.group(3)) for m in BRINGUP_END.finditer(text)]
    boots = len(re.findall(r"\] Linux version ", text))
    mode = MODE.search(text)
    reason = MODE_REASON.search(text)
    apic = APIC_MODE.findall(text)
    online = None
    all_online: List[int] = []
    stale: List[str] = []
    topo: List[Topology] = []
    steps: Dict[str, str] = {}
    done = False
    for match in LAB_LINE.finditer(text):
        words = match.group(1).split()
        fields = lab_fields(match.group(1))
        if words[0] == "cpus" and "online_count" in fields:
            online = int(fields["online_count"])
            all_online.append(online)
            steps["cpus"] = "pass"
            stale += [c for c in fields.get("offline_stale", "").split(",")
                      if c]
            if "topology" in fields:
                topo.append(Topology(
                    fields["topology"], int(fields.get("packages", 0)),
                    int(fields.get("cores", 0)),
                    int(fields.get("threads", 0)),
                    int(fields["online_count"])))
        elif words[0] == "step" and len(words) > 1:
            steps[words[1]] = fields.get("result", "done")
        elif words[0] == "done":
            done = True
    res = BootResult(
        verdict="pass", reasons=[], cpus_expected=cpus_expected,
        cpus_online=online,
        cpus_brought_up=int(end.group(3)) if end else None,
        mode=mode.group(1) if mode else None,
        mode_reason=reason.group(1) if reason else None,
        apic=apic[-1] if apic else "flat",
        bringup_start=float(start.group(1)) if start else None,
        bringup_end=float(end.group(1)) if end else None,
        bringup_ms=None, splats=splats(text), tap=tap(text), steps=steps,
        done=done, log=log, boots=boots, brought_up_each=ups,
        online_each=all_online, offline_stale=stale, topology_each=topo,
        phases_us=phases(text),
        kick_total_us=kick_total(text), machine=machine)
    if start and end:
        res.bringup_ms = round((res.bringup_end - res.bringup_start)
                               * 1000.0, 3)
    res.post_bringup_ms = post_bringup(text, end)
    res.reasons = judge(res, timed_out, plan or ["cpus"],
                        cpus_expected if boot_expected is None
                        else boot_expected)
    if timed_out and hang:
        res.reasons[0] += f" ({hang})"
    if timed_out:
        res.verdict = "hang"
    elif res.reasons:
        res.verdict = "fail"
    return res


def topology_problems(res: BootResult, want: Expected) -> List[str]:
    """Why the topology the guest saw is not the machine's."""
    why = []
    if len(res.topology_each) < len(res.online_each):
        why.append("sysfs: no topology check on a 'cpus' line")
    for num, topo in enumerate(res.topology_each, 1):
        if topo.check != "ok":
            why.append(f"sysfs topology (kernel {num}): {topo.check} "
                       "does not match the CPUs' IDs")
        elif topo.online == want.cpus:
            got = (topo.packages, topo.cores, topo.threads)
            if got not in want.counts:
                why.append(f"sysfs topology (kernel {num}): packages, "
                           f"cores, threads {got}, machine "
                           + " or ".join(map(str, want.counts)))
    return why


def judge(res: BootResult, timed_out: bool, plan: List[str],
          boot_expected: int) -> List[str]:
    """Why the boot is not a pass (empty list: it is)."""
    why = []
    if timed_out:
        why.append("timeout: QEMU killed")
    elif not res.done:
        why.append("guest did not finish /init (crash or early exit)")
    if res.cpus_brought_up is None:
        why.append("no 'smp: Brought up' line")
    else:
        for num, count in enumerate(res.brought_up_each, 1):
            if count != boot_expected:
                why.append(f"kernel {num}: brought up {count} of "
                           f"{boot_expected} CPUs")
    if "cpus" in plan:
        if not res.online_each:
            why.append(f"sysfs: None of {res.cpus_expected} CPUs online")
        for num, count in enumerate(res.online_each, 1):
            if count != res.cpus_expected:
                why.append(f"sysfs (kernel {num}): {count} of "
                           f"{res.cpus_expected} CPUs online")
        if res.offline_stale:
            why.append("sysfs: offline CPUs not at CPUHP_OFFLINE "
                       f"(cpu:state): {','.join(res.offline_stale)}")
        if res.machine:
            why += topology_problems(res, res.machine)
    for step in plan:
        name = "selftest" if step.startswith("selftest") else step
        if name == "cpus":
            continue
        got = res.steps.get(name)
        if got not in ("pass", "done"):
            why.append(f"step {name}: {got or 'missing'}")
    if any(p.startswith("selftest") for p in plan):
        if res.tap.total == 0:
            why.append("selftest: no TAP results")
        if res.tap.failed or res.tap.skipped:
            why.append(f"selftest: {res.tap.failed} failed, "
                       f"{res.tap.skipped} skipped")
    if res.splats:
        why.append(f"{len(res.splats)} splat(s): {res.splats[0]}")
    return why
