"""Where the bringup's hotplug states spend their time: the cpuhp trace
events a trace kernel prints (guest step "trace"), paired and summed per
state. Pure functions, tested against a real log.

cpuhp_enter and cpuhp_multi_enter open a callback of `step` for CPU `cpu`,
cpuhp_exit with the same cpu and step closes it. A callback for an AP runs
on the control CPU (the PREPARE and BP states) or on the AP itself (the
STARTING and ONLINE states): the `[NNN]` field says which.
"""
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

_HEAD = r"^TRACE: .*?\[(\d+)\][^:]*?\s(\d+\.\d+): "
ENTER = re.compile(_HEAD + r"cpuhp_(?:multi_)?enter: cpu: (\d+) "
                   r"target: +-?\d+ step: +(-?\d+) \((.*)\)\s*$", re.M)
EXIT = re.compile(_HEAD + r"cpuhp_exit: cpu: (\d+) +state: +-?\d+ "
                  r"step: +(-?\d+) ret: (-?\d+)\s*$", re.M)


@dataclass
class StateTime:
    name: str
    calls: int = 0
    total_us: float = 0.0
    on_ap_us: float = 0.0     # the part run by the AP itself


def _name(callback: str) -> str:
    """'sched_cpu_activate+0x0/0x1a0' -> 'sched_cpu_activate'."""
    return callback.split("+", 1)[0].strip() or "?"


def per_state(text: str, start: Optional[float] = None,
              end: Optional[float] = None) -> Dict[str, StateTime]:
    """Callback time per state (by callback name), summed over all CPUs,
    for callbacks which began within [start, end] (seconds, the console
    log's clock, which the trace shares)."""
    # (time, exits after enters, enter?, cpu, step, name, ran on)
    events: List[Tuple[float, int, bool, int, int, str, int]] = []
    for m in ENTER.finditer(text):
        events.append((float(m.group(2)), 0, True, int(m.group(3)),
                       int(m.group(4)), _name(m.group(5)),
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
        if (start is not None and t0 < start) or \
                (end is not None and t0 > end):
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
