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
from typing import Dict, Optional, Tuple

_HEAD = r"^TRACE: .*?\[(\d+)\][^:]*?\s(\d+\.\d+): "
ENTER = re.compile(_HEAD + r"cpuhp_(?:multi_)?enter: cpu: (\d+) "
                   r"target: +(-?\d+) step: +(-?\d+) \((.*)\)\s*$", re.M)
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
        '0xffffffff810e2eec' -> the function at that address (KeyError
        if none starts there)."""
        callback = callback.strip()
        if callback.startswith("0x") and self._addrs:
            # A callback is a function's entry: anything else means a
            # System.map of another kernel than the one traced
            addr = int(callback, 16)
            i = bisect.bisect_left(self._addrs, addr)
            if i == len(self._addrs) or self._addrs[i] != addr:
                raise KeyError(f"no function at {callback} in System.map "
                               f"(of another kernel?)")
            return self._names[i]
        return callback.split("+", 1)[0] or "?"


# Callbacks of the tracer itself: a kernel without tracing has none.
TRACER_OWN = ("trace_rb_cpu_prepare",)
# The state that starts the AP and, through cpuhp_kick_ap(), waits for
# its ONLINE callbacks, which nest in it. An AP's bringup ends with it,
# unless it took the AP only to its idle task (a target below the
# highest in the trace, CPUHP_ONLINE), as a windowed parallel bringup
# does: then RESUME, the control CPU's later kick of the AP's hotplug
# thread, runs the ONLINE callbacks, nested in it, and ends the bringup.
BRINGUP = "bringup_cpu"
RESUME = "cpuhp_kick_ap_work"
NESTING = (BRINGUP, RESUME)


class TraceError(ValueError):
    """Events which do not pair up: a trace to not draw conclusions from."""


def per_state(text: str, symbols: Optional[Symbols] = None,
              boot_cpu: int = 0) -> Dict[str, StateTime]:
    """Callback time per state (by callback name), summed over the APs'
    bringups: for each AP, the callbacks which began before its
    bringup_cpu() returned, or the RESUME after it. Callbacks of states
    registered later (by initcalls after the bringup, for every CPU
    online then) are not part of it, nor are the boot CPU's own and the
    tracer's. bringup_cpu() and RESUME count without the ONLINE
    callbacks nested in them. STARTING callbacks
    run on the AP before it is online, where tracepoints do not fire: a
    trace never shows them.

    Events are taken in the order of the trace (merged by time), so an
    exit and the next enter of the same step at the same timestamp pair
    up as they happened. TraceError if an exit has no enter."""
    symbols = symbols or Symbols()
    online = max((int(m.group(4)) for m in ENTER.finditer(text)),
                 default=0)
    open_calls: Dict[Tuple[int, int], Tuple[float, str, int, int]] = {}
    nested: Dict[int, float] = {}       # AP -> ONLINE time in NESTING
    done: Dict[int, bool] = {}          # AP -> its bringup has ended
    out: Dict[str, StateTime] = {}
    for line in text.splitlines():
        if not line.startswith("TRACE: "):
            continue
        m = ENTER.match(line)
        if m:
            cpu, step = int(m.group(3)), int(m.group(5))
            open_calls[(cpu, step)] = (float(m.group(2)),
                                       symbols.name(m.group(6)),
                                       int(m.group(1)), int(m.group(4)))
            continue
        m = EXIT.match(line)
        if not m:
            continue
        cpu, step = int(m.group(3)), int(m.group(4))
        began = open_calls.pop((cpu, step), None)
        if began is None:
            raise TraceError(f"cpuhp_exit without enter: {line.strip()}")
        t0, name, ran_on, target = began
        if cpu == boot_cpu or name in TRACER_OWN or done.get(cpu):
            continue
        us = (float(m.group(2)) - t0) * 1e6
        if name in NESTING:
            us -= nested.pop(cpu, 0.0)
            done[cpu] = name == RESUME or target >= online
        elif any(c == cpu and n in NESTING
                 for (c, _), (_, n, _, _) in open_calls.items()):
            nested[cpu] = nested.get(cpu, 0.0) + us
        st = out.setdefault(name, StateTime(name))
        st.calls += 1
        st.total_us += us
        if ran_on == cpu:
            st.on_ap_us += us
    return out
