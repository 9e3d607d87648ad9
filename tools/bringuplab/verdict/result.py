"""One judged boot as the commands report it: the facts of its console
log, the judge's verdict on them, where the log is, the host's clock."""
from dataclasses import asdict, dataclass, field
from typing import List, Optional

from bringuplab.verdict import judge, parse


@dataclass
class BootResult(parse.Facts):
    # The judge's status and reasons, and the rule of each reason.
    verdict: str = judge.FAIL
    reasons: List[str] = field(default_factory=list)
    rules: List[str] = field(default_factory=list)
    cpus_expected: int = 0
    log: str = ""
    # Set by boot.run when asked (hostcpu.py), not read from the log:
    # host wall time of the bringup and the vCPU threads' run time in it.
    host_wall_ms: Optional[float] = None
    host_vcpu_ms: Optional[float] = None
    # Set by boot.run when the spec names a milestone line (milestone.py):
    # host time from QEMU's start to that line.
    host_milestone_ms: Optional[float] = None

    def to_dict(self) -> dict:
        out = asdict(self)
        del out["text"]
        return out


def judged(facts: parse.Facts, want: judge.Expect, log: str = ""
           ) -> BootResult:
    """The record of a boot whose console showed `facts`; the console
    text itself is not kept."""
    verdict = judge.judge(facts, want)
    kept = {name: value for name, value in vars(facts).items()
            if name != "text"}
    return BootResult(**kept, verdict=verdict.status,
                      reasons=verdict.texts(),
                      rules=[reason.rule for reason in verdict.reasons],
                      cpus_expected=want.online, log=log)


def of_log(text: str, want: judge.Expect, log: str = "") -> BootResult:
    """Parse and judge one console log."""
    return judged(parse.parse(text), want, log)
