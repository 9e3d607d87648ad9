"""`tools/bringup states`: the bringup split by CPU hotplug state, both
modes side by side in one run.

Boots the trace kernel (kconfig/trace.config) with trace_event=cpuhp and
parallel and cpuhp.parallel=0 interleaved, and sums each
state's callback time over the APs' bringups (states.per_state). Under
round-robin TCG a callback's wall time also holds the time slices of
other runnable vCPUs, and tracing slows the boot: compare the modes and
the shares within one run, not the milliseconds across runs.
"""
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List

from . import boot, initramfs, kernel, parse, report, states
from .machinespec import SERVER, MachineSpec
from .errors import BootFailed, InfraError, LabError, UsageError
from .progress import Progress
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


def analyse(log: str, symbols: states.Symbols) -> Boot:
    """One boot's split, from its console log."""
    try:
        text = Path(log).read_text(errors="replace")
    except OSError as err:
        raise LabError(f"states: cannot read {log}: {err}") from None
    res = parse.parse(text)
    if res.bringup_ms is None or res.mode not in MODES:
        raise LabError(f"states: no bringup and mode in {log}")
    if res.steps.get("trace") != "pass":
        raise UsageError(f"states: no complete trace in {log}")
    try:
        split = states.per_state(text, symbols)
    except (states.TraceError, KeyError) as err:
        raise UsageError(f"states: {log}: {err}") from None
    return Boot(res.mode, log, res.bringup_ms, res.phases_us,
                {k: asdict(v) for k, v in split.items()})


def symbols_of(kern: kernel.Kernel) -> states.Symbols:
    system_map = kern.system_map
    if not system_map.is_file():
        raise InfraError(f"states: no {system_map} beside the kernel")
    return states.Symbols(system_map.read_text())


def run(spec: MachineSpec, reps: int) -> List[Boot]:
    mach = spec.make()
    kern = kernel.build("trace")
    symbols = symbols_of(kern)
    initrd = initramfs.build()
    boots: List[Boot] = []
    steps = Progress(reps * len(MODES), "states")
    for rep in range(reps):
        for mode, append in MODES.items():
            spec = boot.BootSpec(mach, kern.image, initrd, append,
                                 ["cpus", "trace"], 0, f"states-{mode}")
            res = boot.run(spec, quiet=True)
            if res.verdict != "pass":
                raise BootFailed(f"states: {mode} boot {rep + 1} did not "
                                 f"pass ({'; '.join(res.reasons)}), log "
                                 f"{res.log}")
            one = analyse(res.log, symbols)
            boots.append(one)
            summed = sum(s["total_us"] for s in one.states.values())
            steps.done(f"{mode} {rep + 1}/{reps}: bringup "
                       f"{one.bringup_ms:.0f} ms, states "
                       f"{summed / 1000:.0f} ms summed, log {res.log}")
    return boots


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
        rows.append([name, report.fmt_ms(state_ms("parallel", name)),
                     report.fmt_ms(state_ms("serial", name)),
                     report.fmt_ms(state_ms("serial", name, "on_ap_us")),
                     f"{state_ms('serial', name) / bring['serial']:.2f}"])
    rest = len(names) - top
    if rest > 0:
        rows.append([f"({rest} more states)",
                     report.fmt_ms(sum_ms("parallel") - sum(
                         state_ms("parallel", n) for n in names[:top])),
                     report.fmt_ms(sum_ms("serial") - sum(
                         state_ms("serial", n) for n in names[:top])),
                     "", ""])
    rows.append(["all states", report.fmt_ms(sum_ms("parallel")),
                 report.fmt_ms(sum_ms("serial")), "",
                 f"{sum_ms('serial') / bring['serial']:.2f}"])
    rows.append(["bringup", report.fmt_ms(bring["parallel"]),
                 report.fmt_ms(bring["serial"]), "", "1.00"])
    # What parallel mode still spends on generic per-CPU work, as a share
    # of the serial bringup: what would be left of it under round-robin
    # TCG, one host thread for every vCPU, if the x86 bringup took no time.
    generic = sum_ms("parallel") - sum(state_ms("parallel", a)
                                       for a in ARCH)
    share = generic / bring["serial"]
    n = min(len(by_mode[m]) for m in MODES)
    return report.table(
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


def command(spec: MachineSpec, reps: int) -> str:
    """The command line that boots this split again."""
    return " ".join(["tools/bringup states", *spec.options(SERVER)]
                    + (["--reps", str(reps)] if reps != 1 else []))


def results(boots: List[Boot], spec: MachineSpec) -> dict:
    """The results part of a states record."""
    reps = sum(1 for b in boots if b.mode == "serial")
    return {"machine": spec.name, "command": command(spec, reps),
            "reps": reps, "boots": [asdict(b) for b in boots]}
