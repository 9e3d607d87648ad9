"""Every figure derived from the boots of a bench or compare run:
medians, ratios within a rep, per-phase medians and the floor. Pure
functions; render.py and the runs print what these compute, and nothing
is summed by hand."""
import statistics
from dataclasses import asdict, dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from bringuplab.report.samples import Sample

# The phase derived from the host's clock (pre_kick_us).
PRE_KICK = "pre-kick"

# The work both kernels do one AP at a time under round-robin TCG, in
# either bringup mode: the PREPARE states of all APs before the first
# kick, the kicks (which under round-robin TCG hold each AP's startup up
# to its wait for the release), each AP's own setup after its release,
# its ONLINE states, and the wait for its idle task. A bringup on one
# host thread cannot be shorter than their sum.
FLOOR_PHASES = (PRE_KICK, "kick", "ap-setup", "online-states", "to-idle")


def median(values: Sequence[float]) -> Optional[float]:
    return statistics.median(values) if values else None


def medians(samples: List[Sample]) -> Dict[str, Dict[str, dict]]:
    """setup -> variant -> {median, min, max, n, failed, busy, host_n,
    host_median, host_min, host_max}; host_* by the host's clock."""
    out: Dict[str, Dict[str, dict]] = {}
    for smp in samples:
        cell = out.setdefault(smp.setup, {}).setdefault(
            smp.variant, {"ms": [], "host": [], "busy": [], "failed": 0})
        if smp.verdict == "pass" and smp.bringup_ms is not None:
            cell["ms"].append(smp.bringup_ms)
            if smp.host_wall_ms is not None:
                cell["host"].append(smp.host_wall_ms)
            if smp.host_busy is not None:
                cell["busy"].append(smp.host_busy)
        else:
            cell["failed"] += 1
    for per_setup in out.values():
        for cell in per_setup.values():
            values = cell.pop("ms")
            host = cell.pop("host")
            busy = cell.pop("busy")
            cell.update(n=len(values), median=median(values),
                        min=min(values) if values else None,
                        max=max(values) if values else None,
                        busy=median(busy),
                        host_n=len(host), host_median=median(host),
                        host_min=min(host) if host else None,
                        host_max=max(host) if host else None)
    return out


def pre_kick_us(smp: Sample) -> Optional[float]:
    """The bringup before the first kick: the whole by the host's clock
    less the series' TSC time from the first kick. In a parallel bringup
    that is the PREPARE states of all CPUs, in a serial one CPU 1's."""
    if smp.host_wall_ms is None or smp.kick_total_us is None:
        return None
    return max(0.0, smp.host_wall_ms * 1000.0 - smp.kick_total_us)


def phase_medians(samples: List[Sample]
                  ) -> Tuple[Dict[Tuple[str, str], Dict[str, float]],
                             List[str]]:
    """(setup, variant) -> phase -> median us over the passing boots
    with a per-phase report, PRE_KICK first; and the phase names in the
    order first seen."""
    cells: Dict[Tuple[str, str], Dict[str, List[float]]] = {}
    names: List[str] = []
    for smp in samples:
        if smp.verdict != "pass" or not smp.phases_us:
            continue
        cell = cells.setdefault((smp.setup, smp.variant), {})
        phases: Dict[str, float] = {}
        pre = pre_kick_us(smp)
        if pre is not None:
            phases[PRE_KICK] = pre
        phases.update(smp.phases_us)
        for name, usec in phases.items():
            cell.setdefault(name, []).append(usec)
            if name not in names:
                names.append(name)
    return ({key: {name: statistics.median(values)
                   for name, values in cell.items()}
             for key, cell in cells.items()}, names)


def rep_ratios(samples: List[Sample], setup: str, num: str, den: str
               ) -> List[float]:
    """Host-clock bringup of variant `num` over `den`, for each rep in
    which both passed on `setup`."""
    times = {(s.rep, s.variant): s.host_wall_ms for s in samples
             if s.setup == setup and s.verdict == "pass" and s.host_wall_ms}
    return [times[(rep, num)] / times[(rep, den)]
            for rep in sorted({rep for rep, _ in times})
            if (rep, num) in times and (rep, den) in times]


def _over(num: Optional[float], den: Optional[float]) -> Optional[float]:
    return num / den if num and den else None


@dataclass(frozen=True)
class Floor:
    """The floor of one kernel/mode's bringup on one machine: the sum
    of its FLOOR_PHASES medians, set against the host-clock medians of
    the same run."""
    setup: str
    variant: str
    parts_ms: Dict[str, float]
    bringup_ms: Optional[float]            # this variant, host clock
    ours_serial_ms: Optional[float]
    upstream_parallel_ms: Optional[float]

    @property
    def total_ms(self) -> float:
        return sum(self.parts_ms.values())

    @property
    def of_ours_serial(self) -> Optional[float]:
        """floor / our serial mode: the lowest ratio to it reachable."""
        return _over(self.total_ms, self.ours_serial_ms)

    @property
    def of_upstream_parallel(self) -> Optional[float]:
        return _over(self.total_ms, self.upstream_parallel_ms)

    @property
    def bringup_over_floor(self) -> Optional[float]:
        """This variant's bringup / its floor."""
        return _over(self.bringup_ms, self.total_ms)

    def to_dict(self) -> dict:
        return dict(asdict(self), total_ms=self.total_ms,
                    of_ours_serial=self.of_ours_serial,
                    of_upstream_parallel=self.of_upstream_parallel,
                    bringup_over_floor=self.bringup_over_floor)


def floors(samples: List[Sample]) -> List[Floor]:
    """A Floor for each (setup, variant) whose passing boots brought the
    APs up in parallel and report every one of FLOOR_PHASES (our kernel
    with bringup_timing, timed by the host). Not of serial boots: there
    PRE_KICK is CPU 1's PREPARE states alone, the others' fall in the
    bringup after it."""
    cells, _ = phase_medians(samples)
    stats = medians(samples)
    serial = {(s.setup, s.variant) for s in samples
              if s.verdict == "pass" and s.mode != "parallel"}
    out = []
    for (setup, variant), phases in cells.items():
        if (setup, variant) in serial or \
                not all(name in phases for name in FLOOR_PHASES):
            continue
        host = {var: cell.get("host_median")
                for var, cell in stats.get(setup, {}).items()}
        out.append(Floor(setup, variant,
                         {name: phases[name] / 1000.0
                          for name in FLOOR_PHASES},
                         host.get(variant), host.get("ours-serial"),
                         host.get("upstream-parallel")))
    return out
