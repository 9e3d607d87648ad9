"""A/B boots of one machine: command lines of our kernel, or the series
less one patch, booted in turn (A B C A B C ...) and compared by the host's
clock and the series' per-phase report. What a changelog quotes when it
says what a patch saved."""
from dataclasses import asdict, dataclass
from typing import List, Sequence, Tuple

from bringuplab.build import kconfig, kernel, tree, worktree
from bringuplab.guest import boot, initramfs
from bringuplab.host import hostcpu
from bringuplab.report import record, stats
from bringuplab.guest.machinespec import MachineSpec
from bringuplab.errors import InfraError, LabError, UsageError
from bringuplab.paths import BUILD
from bringuplab.progress import Progress, say
from bringuplab.report.samples import Sample

OUT = BUILD / "compare"


@dataclass(frozen=True)
class Arm:
    name: str
    append: str
    kernel: kernel.Kernel


def arm_name(append: str) -> str:
    return append.strip() or "default"


def patch_number(text: str, count: int) -> int:
    """The N of --without N: a patch of the series, 1-based."""
    try:
        number = int(text)
    except ValueError:
        raise UsageError(f"--without {text}: not a patch number") from None
    if not 1 <= number <= count:
        raise UsageError(f"--without {number}: the series has patches "
                         f"1-{count}")
    return number


def patch_numbers(text: str, count: int) -> Tuple[int, ...]:
    """The patches of --without N[,M...]: left out together, in one
    arm (a patch which the next one builds on can only be measured as
    "without N+1" against "without N,N+1")."""
    numbers = tuple(sorted({patch_number(part.strip(), count)
                            for part in text.split(",") if part.strip()}))
    if not numbers:
        raise UsageError(f"--without '{text}': no patch number")
    return numbers


def without_name(numbers: Sequence[int]) -> str:
    return "without-" + "+".join(map(str, numbers))


def without_kernel(numbers: Sequence[int]) -> kernel.Kernel:
    """Build the guest kernel of base + the series without the patches
    `numbers`, in a worktree of its own (the developer's tree is left
    alone); InfraError if the rest does not apply without them."""
    patches = tree.series_files()
    name = without_name(numbers)
    src = worktree.fresh(OUT / f"linux-{name}", "base")
    try:
        tree.apply_series([patch for num, patch in enumerate(patches, 1)
                           if num not in numbers], src)
    except LabError as err:
        raise InfraError(f"--without {','.join(map(str, numbers))}: the "
                         f"other patches do not apply without it ({err})"
                         ) from None
    return kernel.build("guest", src, OUT / f"out-{name}", tag=f"-{name}")


def config_names(configs: List[str]) -> List[str]:
    """The --config flavours, checked by the command line before
    anything is built or installed."""
    for name in configs:
        if name == "guest":
            raise UsageError("--config guest: the default arms are already "
                             "that kernel")
        if name == "nosmp":
            raise UsageError("--config nosmp: a compile-only flavour, it "
                             "does not boot the machine's CPUs")
        kconfig.flavour(name)
    if len(set(configs)) != len(configs):
        raise UsageError("--config: the same flavour twice")
    return configs


def arms(appends: List[str], without: Sequence[Tuple[int, ...]],
         configs: Sequence[str] = ()) -> List[Arm]:
    """Arms for each --append (our kernel), each --without (the series
    less that patch, booted with the first --append) and each --config
    (our series built with that flavour, booted with every --append)."""
    if not appends:
        appends = [""]
    if len(set(map(arm_name, appends))) != len(appends):
        raise UsageError("--append: the same command line twice")
    ours = kernel.build("guest")
    out = [Arm(arm_name(a), a, ours) for a in appends]
    for flav in configs:
        built = kernel.build(flav)
        out += [Arm(f"{flav} {arm_name(a)}", a, built) for a in appends]
    for numbers in without:
        out.append(Arm(without_name(numbers), appends[0],
                       without_kernel(numbers)))
    return out


def run(spec: MachineSpec, appends: List[str],
        without: Sequence[Tuple[int, ...]],
        reps: int, configs: Sequence[str] = ()) -> record.Record:
    """Boot the arms on `spec` in turn, `reps` times; the run's record,
    saved in results/. InfraError if a passing boot went untimed by the
    host's clock, which is all this compares."""
    mach = spec.make()
    started = record.now()
    say("compare: " + tree.create())
    todo = arms(appends, without, configs)
    initrd = initramfs.build()
    name = spec.name
    samples: List[Sample] = []
    steps = Progress(reps * len(todo), "compare")
    for rep in range(1, reps + 1):
        for arm in todo:
            append = arm.append
            res = boot.run(boot.BootSpec(mach, arm.kernel.image, initrd,
                                         append, ["cpus"],
                                         label=f"compare-{rep}",
                                         host_cpu=True), quiet=True)
            hostcpu.require(res.verdict, res.host_wall_ms, res.log)
            samples.append(Sample(
                name, mach.cpus, mach.tcg, mach.profile, arm.name, rep,
                res.verdict, res.bringup_ms, res.mode, res.log,
                dict(res.phases_us), res.host_wall_ms, res.host_vcpu_ms,
                res.kick_total_us, res.post_bringup_ms))
            steps.done(f"{arm.name} rep {rep}: {res.verdict}, "
                       f"{res.host_wall_ms or '-'} ms by the host, "
                       f"log {res.log}")
    names = [a.name for a in todo]
    rec = record.make(
        "compare", all(s.verdict == "pass" for s in samples),
        {"machine": name, "arms": names, "reps": reps,
         "floors": [f.to_dict() for f in stats.floors(samples)],
         "samples": [asdict(s) for s in samples]}, started)
    say(f"compare: record {record.save(rec)}")
    return rec
