"""`tools/bringup states`: the bringup split by CPU hotplug state, both
modes side by side in one run.

Boots the trace kernel (kconfig/trace.config) with trace_event=cpuhp and
parallel and cpuhp.parallel=0 interleaved, and sums each
state's callback time over the APs' bringups (states.per_state). Under
round-robin TCG a callback's wall time also holds the time slices of
other runnable vCPUs, and tracing slows the boot: compare the modes and
the shares within one run, not the milliseconds across runs.
"""
from dataclasses import asdict
from pathlib import Path
from typing import List

from bringuplab.build import kernel
from bringuplab.guest import boot, initramfs
from bringuplab.verdict import parse, states
from bringuplab.guest.machinespec import SERVER, MachineSpec
from bringuplab.errors import BootFailed, InfraError, LabError, UsageError
from bringuplab.progress import Progress
from bringuplab.report.states_tables import MODES, Boot


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


def command(spec: MachineSpec, reps: int) -> str:
    """The command line that boots this split again."""
    return " ".join(["tools/bringup states", *spec.options(SERVER)]
                    + (["--reps", str(reps)] if reps != 1 else []))


def results(boots: List[Boot], spec: MachineSpec) -> dict:
    """The results part of a states record."""
    reps = sum(1 for b in boots if b.mode == "serial")
    return {"machine": spec.name, "command": command(spec, reps),
            "reps": reps, "boots": [asdict(b) for b in boots]}
