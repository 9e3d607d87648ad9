"""The verdict on one boot: the facts of its console log (parse.py)
against what the boot was expected to show (Expect) -> a status and
the reasons for it. The only place the lab decides whether a boot
passed; every command that boots, and `bringup judge`, asks it.

What pass means (README, "One boot"), one rule each, every reason
tagged with its rule:
  finished         the guest's /init finished ("LAB: done")
  brought-up       each kernel brought up the CPUs it should
  online           sysfs shows the expected CPUs online ("cpus" step)
  offline-stale    every offline CPU is at CPUHP_OFFLINE
  topology         the topology masks agree with the CPUs' IDs, on every
                   line the guest checked them (and a "cpus" line
                   without the check fails when the machine is known)
  topology-counts  with every vCPU online, the machine's packages,
                   cores and threads per core
  step             every requested guest step passed
  selftest         selftest TAP: some results, none failed, none skipped
  splat            no WARN, BUG, panic, lockdep, KASAN, failed boot,
                   stuck CPU or TSC turned off, but the expected lines
  present, absent  the lines an entry wants, and those it forbids
  restart          a CPU given up in a parallel bringup is started once
                   more, alone, if and only if APs kicked along with it
                   were stopped too (they are started again after it)
  mode             the series' bringup mode line names the expected mode
A boot the lab killed (`killed`) is a hang, whatever else it shows; a
machine QEMU refused to start (`qemu`) is an infrastructure error.
"""
import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from bringuplab.verdict.parse import Facts, started_again

PASS, FAIL, HANG, INFRA = "pass", "fail", "hang", "infra"


@dataclass(frozen=True)
class Expect:
    """What one boot must show."""
    vcpus: int                        # the machine's vCPUs
    online: int                       # CPUs sysfs must show online
    boot: int                         # CPUs each kernel brings up itself
    plan: Tuple[str, ...] = ("cpus",)
    # "parallel", "serial" or "none" (no CPU to start at boot): what the
    # series' mode line must say (with one vCPU: that there is one);
    # None: not checked (a base kernel).
    mode: Optional[str] = None
    # Patterns the console log must match; splats they match are
    # expected (an injected failure), not a failure of the boot.
    present: Tuple[str, ...] = ()
    absent: Tuple[str, ...] = ()      # patterns it must not match
    # Packages, cores, threads per core the guest may count with every
    # vCPU online (machine.linux_topologies); empty: not checked.
    topologies: Tuple[Tuple[int, int, int], ...] = ()
    # A CPU the boot gives up on in a parallel bringup (an injected
    # fault): (cpu, the give-up line, the start-again-alone line).
    restart: Optional[Tuple[int, str, str]] = None


@dataclass(frozen=True)
class Reason:
    rule: str
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Verdict:
    status: str                       # PASS, FAIL, HANG or INFRA
    reasons: Tuple[Reason, ...]

    @property
    def ok(self) -> bool:
        return self.status == PASS

    def texts(self) -> List[str]:
        return [reason.text for reason in self.reasons]


# Each rule: the reasons the facts break it, one append per reason.
def killed(facts: Facts, _: Expect) -> List[str]:
    why = []
    if facts.killed:
        why.append(f"timeout: QEMU killed ({facts.killed})")
    return why


def finished(facts: Facts, _: Expect) -> List[str]:
    why = []
    if not (facts.done or facts.killed):
        why.append("guest did not finish /init (crash or early exit)")
    return why


def off_count(counts: List[int], want: int, text: str) -> List[str]:
    """One reason per kernel (booted or kexec'd) whose count is not
    `want`; `text` is formatted with num, count and want."""
    return [text.format(num=num, count=count, want=want)
            for num, count in enumerate(counts, 1) if count != want]


def brought_up(facts: Facts, want: Expect) -> List[str]:
    why = off_count(facts.brought_up_each, want.boot,
                    "kernel {num}: brought up {count} of {want} CPUs")
    if not facts.brought_up_each:
        why.append("no 'smp: Brought up' line")
    return why


def online(facts: Facts, want: Expect) -> List[str]:
    why = off_count(facts.online_each, want.online,
                    "sysfs (kernel {num}): {count} of {want} CPUs online")
    if "cpus" in want.plan and not facts.online_each:
        why.append(f"sysfs: no 'cpus' line ({want.online} CPUs expected "
                   "online)")
    return why


def offline_stale(facts: Facts, _: Expect) -> List[str]:
    why = []
    if facts.offline_stale:
        why.append("sysfs: offline CPUs not at CPUHP_OFFLINE (cpu:state): "
                   + ",".join(facts.offline_stale))
    return why


def topology(facts: Facts, want: Expect) -> List[str]:
    why = []
    if want.topologies and len(facts.topology_each) < len(facts.online_each):
        why.append("sysfs: no topology check on a 'cpus' line")
    checks = [(f"kernel {num}", topo.check)
              for num, topo in enumerate(facts.topology_each, 1)]
    checks += [(f"after {step}", check)
               for step, check in facts.step_topology.items()]
    for where, check in checks:
        if check != "ok":
            why.append(f"sysfs topology ({where}): {check} does not match "
                       "the CPUs' IDs")
    return why


def topology_counts(facts: Facts, want: Expect) -> List[str]:
    why = []
    for num, topo in enumerate(facts.topology_each, 1):
        got = (topo.packages, topo.cores, topo.threads)
        # With CPUs offline the guest counts fewer: the online rule
        # fails such a boot on its own.
        if want.topologies and topo.online == want.vcpus \
                and got not in want.topologies:
            why.append(f"sysfs topology (kernel {num}): packages, cores, "
                       f"threads {got}, machine "
                       + " or ".join(map(str, want.topologies)))
    return why


def steps(facts: Facts, want: Expect) -> List[str]:
    why = []
    for step in want.plan:
        # selftest-all reports as selftest; "cpus" is the online rule's
        name = "selftest" if step.startswith("selftest") else step
        got = facts.steps.get(name, "missing")
        if name != "cpus" and got not in ("pass", "done"):
            why.append(f"step {name}: {got}")
    return why


def selftest(facts: Facts, want: Expect) -> List[str]:
    why = []
    if any(step.startswith("selftest") for step in want.plan):
        if not facts.tap.total:
            why.append("selftest: no TAP results")
        elif facts.tap.planned is None:
            why.append("selftest: no TAP plan line (1..N)")
        elif facts.tap.planned != facts.tap.total:
            # a test that hung or a console that lost lines
            why.append(f"selftest: {facts.tap.total} TAP results, "
                       f"{facts.tap.planned} planned")
        if facts.tap.failed:
            why.append(f"selftest: {facts.tap.failed} failed")
        if facts.tap.skipped:
            why.append(f"selftest: {facts.tap.skipped} skipped")
    return why


def splats(facts: Facts, want: Expect) -> List[str]:
    why = []
    # the lines the boot wants (an injected failure) are no failure
    left = [s for s in facts.splats
            if not any(re.search(pat, s) for pat in want.present)]
    if left:
        why.append(f"{len(left)} splat(s): {left[0]}")
    return why


def present(facts: Facts, want: Expect) -> List[str]:
    why = []
    for pat in want.present:
        if not re.search(pat, facts.text, re.M):
            why.append(f"no line /{pat}/")
    return why


def absent(facts: Facts, want: Expect) -> List[str]:
    why = []
    for pat in want.absent:
        if re.search(pat, facts.text, re.M):
            why.append(f"line /{pat}/ present")
    return why


def restart(facts: Facts, want: Expect) -> List[str]:
    why: List[str] = []
    if not want.restart:
        return why
    cpu, given_up, again = want.restart
    found = started_again(facts.text, given_up)
    if found is None:       # no give-up: the entry's `present` says so
        return why
    cpus, between = found
    others = [other for other in cpus if other != cpu]
    retried = re.search(again, between, re.M)
    if others and not retried:
        why.append(f"CPUs {','.join(map(str, others))} were stopped with "
                   f"CPU{cpu} and started again, but CPU{cpu} was not "
                   "started again alone first")
    if retried and not others:
        why.append(f"CPU{cpu} was started again alone, though no CPU "
                   "kicked along with it was stopped")
    return why


def mode(facts: Facts, want: Expect) -> List[str]:
    why = []
    if want.mode and want.vcpus == 1 and not facts.mode:
        # No AP to start: either mode is right, but say which.
        why.append("no bringup mode line")
    if want.mode and want.vcpus > 1 and facts.mode != want.mode:
        why.append(f"mode {facts.mode}, expected {want.mode}")
    return why


Rule = Callable[[Facts, Expect], List[str]]
RULES: Tuple[Tuple[str, Rule], ...] = (
    ("killed", killed), ("finished", finished), ("brought-up", brought_up),
    ("online", online), ("offline-stale", offline_stale),
    ("topology", topology), ("topology-counts", topology_counts),
    ("step", steps), ("selftest", selftest), ("splat", splats),
    ("present", present), ("absent", absent), ("restart", restart),
    ("mode", mode))


def judge(facts: Facts, want: Expect) -> Verdict:
    """The verdict on one boot's facts."""
    if facts.qemu_errors and not facts.boots:
        return Verdict(INFRA, (Reason("qemu", "QEMU refused the machine: "
                                      + facts.qemu_errors[0]),))
    reasons = tuple(Reason(rule, text) for rule, check in RULES
                    for text in check(facts, want))
    if facts.killed:
        return Verdict(HANG, reasons)
    return Verdict(FAIL if reasons else PASS, reasons)
