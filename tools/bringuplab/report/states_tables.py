"""The table of a states record (states_report.py): each hotplug
state's callback time, parallel against serial. Nothing here boots."""
import statistics
from dataclasses import dataclass, field
from typing import Dict, List

from bringuplab.report import columns
from bringuplab.verdict import states
from bringuplab.errors import UsageError


APPEND = "trace_event=cpuhp"


MODES = {"parallel": APPEND, "serial": APPEND + " cpuhp.parallel=0"}


# The states of the x86 bringup itself: the kick (INIT/SIPI/SIPI) and
# bringup_cpu(), which waits for the AP (alive, callin, TSC, online);
# and the hotplug core's resume of an AP's ONLINE states, which is the
# control CPU waiting for them. Every other state is generic per-CPU
# work.
ARCH = ("native_cpu_kick", "bringup_cpu", states.RESUME)


@dataclass
class Boot:
    mode: str
    log: str
    bringup_ms: float
    phases_us: Dict[str, int]
    states: Dict[str, dict] = field(default_factory=dict)


def _median(values: List[float]) -> float:
    return statistics.median(values) if values else 0.0


def render(boots: List[Boot], top: int = 15) -> str:
    by_mode = {m: [b for b in boots if b.mode == m] for m in MODES}

    def state_ms(mode: str, name: str, key: str = "total_us") -> float:
        return _median([b.states.get(name, {}).get(key, 0.0)
                        for b in by_mode[mode]]) / 1000.0

    def sum_ms(mode: str) -> float:
        return _median([sum(s["total_us"] for s in b.states.values())
                        for b in by_mode[mode]]) / 1000.0

    if any(not by_mode[m] for m in MODES):
        raise UsageError("states: need boots of both modes (parallel and "
                         "cpuhp.parallel=0)")
    names = sorted({n for b in boots for n in b.states},
                   key=lambda n: -max(state_ms("serial", n),
                                      state_ms("parallel", n)))
    bring = {m: _median([b.bringup_ms for b in by_mode[m]]) for m in MODES}
    rows: List[List[object]] = []
    for name in names[:top]:
        rows.append([name, columns.fmt_ms(state_ms("parallel", name)),
                     columns.fmt_ms(state_ms("serial", name)),
                     columns.fmt_ms(state_ms("serial", name, "on_ap_us")),
                     f"{state_ms('serial', name) / bring['serial']:.2f}"])
    rest = len(names) - top
    if rest > 0:
        rows.append([f"({rest} more states)",
                     columns.fmt_ms(sum_ms("parallel") - sum(
                         state_ms("parallel", n) for n in names[:top])),
                     columns.fmt_ms(sum_ms("serial") - sum(
                         state_ms("serial", n) for n in names[:top])),
                     "", ""])
    rows.append(["all states", columns.fmt_ms(sum_ms("parallel")),
                 columns.fmt_ms(sum_ms("serial")), "",
                 f"{sum_ms('serial') / bring['serial']:.2f}"])
    rows.append(["bringup", columns.fmt_ms(bring["parallel"]),
                 columns.fmt_ms(bring["serial"]), "", "1.00"])
    # What parallel mode still spends on generic per-CPU work, as a share
    # of the serial bringup: what would be left of it under round-robin
    # TCG, one host thread for every vCPU, if the x86 bringup took no time.
    generic = sum_ms("parallel") - sum(state_ms("parallel", a)
                                       for a in ARCH)
    share = generic / bring["serial"]
    n = min(len(by_mode[m]) for m in MODES)
    return columns.table(
        ["state (callback)", "parallel ms", "serial ms", "on AP",
         "of serial"], rows) + (
        f"\n\nmedians of {n} boot(s) per mode; callback time summed over "
        f"the APs;\n'on AP' (serial mode) is the part the AP ran itself, "
        f"the rest ran on the control CPU; bringup_cpu and "
        f"{states.RESUME} (resuming an AP's ONLINE states) without the "
        f"ONLINE callbacks nested in them;\nSTARTING callbacks are not "
        f"traced.\n\n"
        f"Generic states (all but {', '.join(ARCH)}) in parallel mode: "
        f"{generic:.0f} ms, {share:.2f} of the serial bringup "
        f"{bring['serial']:.0f} ms; "
        f"measured ratio {bring['parallel'] / bring['serial']:.2f}.")
