"""Where the bringup's hotplug states spend their time: the cpuhp trace
events a trace kernel prints (guest step "trace"), paired and summed per
state. Pure functions, tested against a real log.

cpuhp_enter and cpuhp_multi_enter open a callback of `step` for CPU `cpu`,
cpuhp_exit with the same cpu and step closes it. A callback for an AP runs
on the control CPU (the PREPARE and BP states) or on the AP itself (the
STARTING and ONLINE states): the `[NNN]` field says which.
"""
import bisect
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

_HEAD = r"^TRACE: .*?\[(\d+)\][^:]*?\s(\d+\.\d+): "
ENTER = re.compile(_HEAD + r"cpuhp_(?:multi_)?enter: cpu: (\d+) "
                   r"target: +-?\d+ step: +(-?\d+) \((.*)\)\s*$", re.M)
EXIT = re.compile(_HEAD + r"cpuhp_exit: +cpu: (\d+) +state: +-?\d+ "
                  r"step: +(-?\d+) ret: (-?\d+)\s*$", re.M)


@dataclass
class StateTime:
    name: str
    calls: int = 0
    total_us: float = 0.0
    on_ap_us: float = 0.0     # the part run by the AP itself


class Symbols:
    """Addresses -> function names from a System.map, for kernels without
    kallsyms, whose trace prints callbacks as bare addresses."""

    def __init__(self, system_map: str = "") -> None:
        table = []
        for line in system_map.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                table.append((int(parts[0], 16), parts[2]))
        table.sort()
        self._addrs = [a for a, _ in table]
        self._names = [n for _, n in table]

    def name(self, callback: str) -> str:
        """'sched_cpu_activate+0x0/0x1a0' -> 'sched_cpu_activate';
        '0xffffffff810e2eec' -> the function at or below the address."""
        callback = callback.strip()
        if callback.startswith("0x") and self._addrs:
            i = bisect.bisect_right(self._addrs, int(callback, 16)) - 1
            return self._names[i] if i >= 0 else callback
        return callback.split("+", 1)[0] or "?"


# Callbacks of the tracer itself: a kernel without tracing has none.
TRACER_OWN = ("trace_rb_cpu_prepare",)


def per_state(text: str, symbols: Optional[Symbols] = None,
              boot_cpu: int = 0) -> Dict[str, StateTime]:
    """Callback time per state (by callback name), summed over all APs,
    for every callback the log's trace shows for an AP: a boot whose plan
    has no hotplug step shows only the bringup. (The trace clock is not
    the console's, so the bringup lines cannot delimit it.) The tracer's
    own callbacks are left out."""
    symbols = symbols or Symbols()
    # (time, exits after enters, enter?, cpu, step, name, ran on)
    events: List[Tuple[float, int, bool, int, int, str, int]] = []
    for m in ENTER.finditer(text):
        events.append((float(m.group(2)), 0, True, int(m.group(3)),
                       int(m.group(4)), symbols.name(m.group(5)),
                       int(m.group(1))))
    for m in EXIT.finditer(text):
        events.append((float(m.group(2)), 1, False, int(m.group(3)),
                       int(m.group(4)), "", int(m.group(1))))
    events.sort(key=lambda e: (e[0], e[1]))
    open_calls: Dict[Tuple[int, int], Tuple[float, str, int]] = {}
    out: Dict[str, StateTime] = {}
    for when, _, is_enter, cpu, step, name, ran_on in events:
        if is_enter:
            open_calls[(cpu, step)] = (when, name, ran_on)
            continue
        began = open_calls.pop((cpu, step), None)
        if began is None:
            continue
        t0, name, ran_on = began
        if cpu == boot_cpu or name in TRACER_OWN:
            continue
        st = out.setdefault(name, StateTime(name))
        st.calls += 1
        us = (when - t0) * 1e6
        st.total_us += us
        if ran_on == cpu:
            st.on_ap_us += us
    return out


def total_us(states: Dict[str, StateTime]) -> float:
    return sum(s.total_us for s in states.values())
