"""Console log -> Facts (no verdict: see judge.py). Pure functions,
tested against real logs."""
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

_TS = r"^\[\s*(\d+\.\d+)\]\s"
# The first and the last line of the kernel's bringup of the APs.
START_TEXT = r"smp: Bringing up secondary CPUs"
END_TEXT = r"smp: Brought up (\d+) nodes?, (\d+) CPUs?"
BRINGUP_START = re.compile(_TS + ".*" + START_TEXT, re.M)
BRINGUP_END = re.compile(_TS + ".*" + END_TEXT, re.M)
# Printed by the series: "cpuhp: parallel bringup of N CPUs" or
# "cpuhp: serial bringup of N CPUs" ("smpboot:" up to v2), "cpuhp: no
# secondary CPUs to bring up" (v3; mode "none"), and, when parallel
# bringup is configured but not used, "smpboot: parallel bringup
# disabled: reason".
MODE = re.compile(r"(?:smpboot|cpuhp): (?:(parallel|serial) bringup of "
                  r"(\d+) CPUs|(no) secondary CPUs to bring up)", re.M)
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
# Appended by the lab (boot.py) when it kills QEMU: the boot hung.
KILLED = re.compile(r"^# lab: killed: (.*)$", re.M)
QEMU_PREFIX = "qemu-system-x86_64: "
TAP_RESULT = re.compile(r"^(ok|not ok) \d+ (.*?)(?: # (.*))?$", re.M)
TAP_PLAN = re.compile(r"^1\.\.(\d+)\s*$", re.M)

# Lines the kernel prints when something went wrong, by kind (judge.py
# fails a boot on any the boot's entry does not ask for).
# Each kind of splat: the alternatives of its pattern.
# Each alternative is a line some kernel the lab boots prints (6.1,
# 6.12, this series' versions); tests/test_splat_rows.py holds one such
# line per alternative that only that alternative catches.
SPLAT_TEXTS = (
    ("WARN", (r"WARNING: CPU: \d+ PID: \d+",
              r"------------\[ cut here \]------------")),
    # A soft lockup is a stuck CPU, below
    ("BUG", (r"\bBUG: (?!KASAN|soft lockup)", r"Oops: ",
             r"general protection fault", r"invalid opcode: ")),
    ("panic", (r"Kernel panic - not syncing",)),
    ("lockdep", (r"possible circular locking dependency",
                 r"inconsistent lock state", r"possible recursive locking",
                 r"lock held when returning", r"DEBUG_LOCKS_WARN_ON",
                 r"suspicious RCU usage", r"irq lock inversion")),
    # "BUG: KASAN: <bug> in <where>", and after a general protection
    # fault "KASAN: <bug> in range [...]"
    ("KASAN", (r"KASAN: ",)),
    # 6.1 and every version of the series; 6.12; v1 (the real-mode
    # stack lock, the release); v2 and v3 (a CPU given up on that INIT
    # could not stop; v3: a kick refused to such a CPU); v2 (a CPU given
    # up on, put back under INIT)
    ("boot-failed", (r"do_boot_cpu failed",
                     r"failed to report alive state",
                     r"stuck with the real-mode stack lock",
                     r"real-mode stack lock held by",
                     r"did not take its release",
                     r"could not be stopped",
                     r"not started, it may still run",
                     r"did not come up within \d+ seconds")),
    ("stuck", (r"CPU#\d+ stuck", r"rcu_\w+ detected stalls",
               r"self-detected stall")),
    # A TSC sync test which fails turns the TSC clock off: a slower boot
    # that still brings every CPU up, so it needs a splat of its own. The
    # test runs only while the TSC is trusted, and the first failure is
    # the one which prints this line. (TCG profiles without a constant
    # TSC give it up before the bringup, "due to TSCs unsynchronized":
    # not a failure.)
    ("tsc-off", (r"Marking TSC unstable due to check_tsc_sync",)),
)
SPLATS = [(kind, re.compile("|".join(alts))) for kind, alts in SPLAT_TEXTS]


@dataclass
class Tap:
    total: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    # The results the plan lines ("1..N", one per TAP run) announce;
    # None: no plan line
    planned: Optional[int] = None


@dataclass
class Topology:
    check: str                        # "ok", "cpu3:thread_siblings", ...
    packages: int
    cores: int
    threads: int
    online: int                       # online_count of the same line


@dataclass
class Facts:
    """What one console log shows, judged by nobody: judge.py decides
    what they mean against what the boot was expected to show. The
    defaults are the facts of an empty log."""
    boots: int = 0                    # kernels started (kexec chains: >1)
    # "smp: Brought up" of the first kernel, and of each kernel
    cpus_brought_up: Optional[int] = None
    brought_up_each: List[int] = field(default_factory=list)
    # online_count of the guest's last "cpus" line, and of each
    cpus_online: Optional[int] = None
    online_each: List[int] = field(default_factory=list)
    # Offline CPUs not at CPUHP_OFFLINE, "cpu:state" (guest/init).
    offline_stale: List[str] = field(default_factory=list)
    # Per "cpus" line: the guest's check of the topology masks ("ok",
    # or the first CPU:mask that disagrees with the IDs) and the
    # packages, cores and threads per core it counted.
    topology_each: List[Topology] = field(default_factory=list)
    # Step -> the topology check on its result line (hotplug, smt-on,
    # online-all check the masks again after their hotplug).
    step_topology: Dict[str, str] = field(default_factory=dict)
    mode: Optional[str] = None        # parallel, serial, or None
    mode_reason: Optional[str] = None
    apic: str = "flat"                # the first kernel's APIC driver;
    #                                   "flat" if never switched
    bringup_start: Optional[float] = None
    bringup_end: Optional[float] = None
    bringup_ms: Optional[float] = None
    splats: List[str] = field(default_factory=list)
    tap: Tap = field(default_factory=Tap)
    # Step -> its result= ("done" if the line has none), from the
    # guest's "LAB: step" lines.
    steps: Dict[str, str] = field(default_factory=dict)
    done: bool = False                # the guest's "LAB: done"
    phases_us: Dict[str, int] = field(default_factory=dict)
    kick_total_us: Optional[int] = None
    # Guest ms from "smp: Brought up" to the first clocksource switch
    # after it (CLOCKSOURCE_SWITCH); None if either is missing.
    post_bringup_ms: Optional[float] = None
    # QEMU's own errors (not its warnings) at the top of the log.
    qemu_errors: List[str] = field(default_factory=list)
    # Why the lab killed QEMU (its "# lab: killed:" line); "" if QEMU
    # exited by itself.
    killed: str = ""
    # The console log itself, for the lines an entry wants or forbids.
    text: str = field(default="", repr=False)


def post_bringup(text: str, end: Optional["re.Match[str]"]
                 ) -> Optional[float]:
    """Guest ms from the end of the bringup (`end`, a BRINGUP_END match)
    to the first clocksource switch after it."""
    if not end:
        return None
    switch = CLOCKSOURCE_SWITCH.search(text, end.end())
    if not switch:
        return None
    # printk times have six decimals: whole microseconds, so the
    # difference in ms is exact to the microsecond without rounding
    return (_us(switch.group(1)) - _us(end.group(1))) / 1000


def _us(stamp: str) -> int:
    """A printk time ("5.272542", always six decimals) in
    microseconds."""
    secs, _, frac = stamp.partition(".")
    return int(secs) * 1_000_000 + int(frac)


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
    return {key: value for key, _, value in
            (tok.partition("=") for tok in line.split() if "=" in tok)}


def tap(text: str) -> Tap:
    plans = TAP_PLAN.findall(text)
    res = Tap(planned=sum(map(int, plans)) if plans else None)
    for match in TAP_RESULT.finditer(text):
        res.total += 1
        if match.group(1) == "not ok":
            res.failed += 1
        # a directive: "# SKIP", with or without a reason (any case)
        elif (match.group(3) or "").upper().startswith("SKIP"):
            res.skipped += 1
        else:
            res.passed += 1
    return res


# x86's list of the CPUs it starts (announce_cpu(): a node's line, then
# " #N" continued); a continuation another message cut gets a line of
# its own.
ANNOUNCED = re.compile(r"^\[[ \d.]+\] (?:\.\.\.\. node\s+#\d+, CPUs:)?"
                       r"((?:\s+#\d+)+)\s*$", re.M)


def announced(text: str) -> List[int]:
    return [int(n) for m in ANNOUNCED.finditer(text)
            for n in re.findall(r"#(\d+)", m.group(1))]


def started_again(text: str, line: str) -> Optional[Tuple[List[int], str]]:
    """The CPUs announced before the first match of `line` and again
    after it (before "smp: Brought up"), and the text in between; None
    if `line` is not there. A CPU announced only after it is started
    for the first time (a later wave of the bringup, a serial one)."""
    first = re.search(line, text, re.M)
    if not first:
        return None
    end = re.compile(END_TEXT).search(text, first.end())
    between = text[first.end():end.start() if end else len(text)]
    before = set(announced(text[:first.start()]))
    return sorted(set(announced(between)) & before), between


# A kernel message on the console (printk.time=1). The console driver
# writes each whole, with the port's interrupts off, so nothing cuts
# one; the guest's own lines (LAB:, TAP) go through the tty and one may
# cut them at any character, e.g. "LAB: cpus ... offline_stale= t" +
# "[    1.832665] tsc: Refined TSC ..." + "opology=ok ...".
KERNEL_MESSAGE = re.compile(r"\[\s*\d+\.\d{6}\] ")


def unsplice(text: str) -> str:
    """The console log with every guest line that kernel messages cut
    made whole again, after those messages."""
    out: List[str] = []
    cut = ""            # the guest line so far, waiting for its rest
    for line in text.splitlines(keepends=True):
        message = KERNEL_MESSAGE.search(line)
        if message:
            # what comes before it (nothing, for a line of its own) is
            # the start of a guest line the message cut
            cut += line[:message.start()]
            out.append(line[message.start():])
        else:
            out.append(cut + line)
            cut = ""
    return "".join(out) + cut


def parse(text: str) -> Facts:
    """The facts of one console log (the lab's log of a boot: QEMU's
    command line, QEMU's and the kernel's output, the guest's LAB lines,
    and the lab's own "# lab:" lines), guest lines cut by kernel
    messages made whole first."""
    text = unsplice(text)
    start = BRINGUP_START.search(text)
    end = BRINGUP_END.search(text)
    mode = MODE.search(text)
    reason = MODE_REASON.search(text)
    apic = APIC_MODE.findall(text)
    killed = KILLED.search(text)
    facts = Facts(
        boots=len(re.findall(r"\] Linux version ", text)),
        brought_up_each=[int(m.group(3)) for m in BRINGUP_END.finditer(text)],
        mode=(mode.group(1) or "none") if mode else None,
        mode_reason=reason.group(1) if reason else None,
        apic=apic[0] if apic else "flat",
        splats=splats(text), tap=tap(text), phases_us=phases(text),
        kick_total_us=kick_total(text),
        post_bringup_ms=post_bringup(text, end),
        qemu_errors=qemu_errors(text),
        killed=killed.group(1) if killed else "", text=text)
    if end:
        facts.cpus_brought_up = int(end.group(3))
        facts.bringup_end = float(end.group(1))
    if start:
        facts.bringup_start = float(start.group(1))
    if start and end:
        facts.bringup_ms = (_us(end.group(1)) - _us(start.group(1))) / 1000
    for match in LAB_LINE.finditer(text):
        lab_line(facts, match.group(1))
    return facts


def lab_line(facts: Facts, line: str) -> None:
    """Add what one guest "LAB: " line says to `facts`."""
    words = line.split()
    fields = lab_fields(line)
    if words[0] == "cpus" and "online_count" in fields:
        facts.cpus_online = int(fields["online_count"])
        facts.online_each.append(facts.cpus_online)
        facts.offline_stale += [
            c for c in fields.get("offline_stale", "").split(",") if c]
        if "topology" in fields:
            facts.topology_each.append(Topology(
                fields["topology"], int(fields.get("packages", 0)),
                int(fields.get("cores", 0)), int(fields.get("threads", 0)),
                facts.cpus_online))
    elif words[0] == "step" and len(words) > 1:
        facts.steps[words[1]] = fields.get("result", "done")
        if "topology" in fields:
            facts.step_topology[words[1]] = fields["topology"]
    elif words[0] == "done":
        facts.done = True


def qemu_errors(text: str) -> List[str]:
    """QEMU's errors before the guest's first line, however many
    warnings come first (its warnings, e.g. the AMD profile's about
    hyperthreading, do not stop the machine); the lab's own lines
    ("# ...") are skipped."""
    errors = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if not line.startswith(QEMU_PREFIX):
            break
        if not line.startswith(QEMU_PREFIX + "warning:"):
            errors.append(line)
    return errors


def killed_line(why: str) -> str:
    """The line the lab appends to the log of a boot it killed."""
    return f"\n# lab: killed: {why}\n"
