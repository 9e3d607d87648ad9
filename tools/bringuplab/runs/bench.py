"""`make bench`: our series against upstream 6.12, side by side.

Boots are interleaved (A B C D A B C D ...) so that drift of this noisy
machine hits every kernel and mode alike; results are medians.
"""
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from bringuplab.build import kernel, tree, upstream, worktree
from bringuplab.guest import boot, initramfs
from bringuplab.host import hostcpu
from bringuplab.report import record, scale_tables, stats
from bringuplab.report.bench_tables import plot
from bringuplab.guest.machinespec import SERVER, MachineSpec
from bringuplab.errors import UsageError
from bringuplab.paths import BUILD, ROOT
from bringuplab.progress import Progress, say
from bringuplab.report.samples import Sample
from bringuplab.build.variants import Variant, default_variants
from bringuplab.verdict import judge

# The commit of this repository (tagged series-v1) whose patches/ is the
# first version of the series
V1_REV = "60696f096114a804271fd981cde8a33dd1073113"

# The commit of this repository whose patches/ is the second version of
# the series (before the v3 failure path)
V2_REV = "de6f83828a5701f0f511a0521d504828cae1af35"

# The commit whose patches/ is the third version of the series as first
# sent: the main series with the calibration and workqueue series on top
V3_REV = "31db09133e85a7b61f13f36e0cdbedcf7f6d3f27"

# An experiment on top of the series, booted by the halt-* variants, on
# the series as it was written for (patches/ at HALT_SERIES_REV, the
# revision of records/halt-bench-20261203T151613Z.json); the series
# has moved on under it since
HALT_PATCH = ROOT / "experiments" / "v2-ap-halt-while-waiting.patch"
HALT_SERIES_REV = "284d8090eafab88c9dfe41e8ab17839a148b7d94"


# The machine sizes of the scale suite
SCALE_SIZES = (32, 64, 128, 256, 512, 1024)


def _server(cpus: int, tcg: str, profile: str) -> MachineSpec:
    """2 sockets, SMT 2, 2 NUMA nodes."""
    return MachineSpec(cpus, f"2x{cpus // 4}x2", 2, profile, tcg=tcg)


SUITES: Dict[str, List[MachineSpec]] = {
    "quick": [_server(64, "single", "intel"), _server(32, "multi", "intel"),
              _server(32, "single", "amd")],
    "full": [_server(n, tcg, prof) for prof in ("intel", "amd")
             for tcg in ("single", "multi") for n in (8, 16, 32, 64)]
    + [MachineSpec(64, "64x1x1")],
    # The round-robin target machine alone, for many boots per cell: its
    # ratio moves with this host's emulation speed (docs/benchmark.md).
    "rr64": [SERVER],
    # The two machines the series' targets are stated for: round-robin
    # 64 vCPUs (against upstream's parallel bringup) and multi-threaded
    # 32 vCPUs (parallel against serial).
    "targets": [SERVER, _server(32, "multi", "intel")],
    # What each split-out series is worth: the round-robin server, one
    # package per vCPU (each AP the first of its package, which the
    # calibration series is about) and AMD vCPUs without a constant TSC.
    "extras": [SERVER, MachineSpec(64, "64x1x1"),
               _server(32, "single", "amd")],
    # How the cost of a bringup grows with the machine: round-robin (one
    # host thread, so work rather than host parallelism), Intel, 2
    # sockets, x2APIC with interrupt remapping from 256 vCPUs (APIC IDs
    # above 254), memory for every vCPU's per-CPU data and threads.
    "scale": [MachineSpec(n, f"2x{n // 4}x2", 2, "intel", tcg="single",
                          memory_mb=max(2048, 4 * n))
              for n in SCALE_SIZES],
}

# The config flavour of a suite's kernels, when not the guest's. The
# scale suite's kernels tick at 100 Hz: on one host thread the periodic
# ticks of the vCPUs online livelock a 256-vCPU boot at Debian's 250 Hz
# (docs/limits.md), for every kernel alike
SUITE_CONFIG: Dict[str, str] = {"scale": "scale-hz100"}
# The console line a suite's boots time by the host's clock, QEMU's
# start to it (Sample.host_init_ms): the kernel starting PID 1
SUITE_MILESTONE: Dict[str, bytes] = {"scale": rb"Run /init as init process"}
# A suite whose boots have a fixed limit, seconds, rather than the one
# boot.py scales with the vCPUs, and no limit on console silence; the
# first size a boot of which runs past it (a hang) ends the suite's
# ladder: no larger size boots after
SUITE_TIMEOUT_S: Dict[str, float] = {"scale": 20 * 60.0}


def check_suite(suite: str) -> None:
    if suite not in SUITES:
        raise UsageError(f"unknown suite '{suite}' (known: "
                         f"{', '.join(SUITES)})")


def suite_machines(suite: str, sizes: Optional[Sequence[int]] = None
                   ) -> List[MachineSpec]:
    """The suite's machines, or those of them with `sizes` vCPUs (a rerun
    of some rungs of a ladder); UsageError for a size it does not have."""
    check_suite(suite)
    if not sizes:
        return SUITES[suite]
    has = sorted({mach.cpus for mach in SUITES[suite]})
    missing = sorted(set(sizes) - set(has))
    if missing:
        raise UsageError(f"bench: suite '{suite}' has no machine of "
                         f"{', '.join(map(str, missing))} vCPUs (its sizes: "
                         f"{', '.join(map(str, has))})")
    return [mach for mach in SUITES[suite] if mach.cpus in sizes]


# Earlier versions of the series, by kernel name: the main series of
# patches/ at that commit and the split-out series it was sent with
OLD_SERIES: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "v1": (V1_REV, ()), "v2": (V2_REV, ()),
    "v3": (V3_REV, ("calibration", "workqueue"))}


def _build(which: str, config: str = "guest") -> kernel.Kernel:
    """One of the kernels a variant names, built with flavour `config`."""
    if which == "ours":
        return kernel.build(config)
    if which == "upstream":
        return upstream.build(config)
    if which == "halt":
        halt_tree = worktree.fresh(BUILD / "halt" / "linux", "base")
        tree.apply_series(tree.series_at(HALT_SERIES_REV) + [HALT_PATCH],
                          halt_tree)
        return kernel.build(config, halt_tree,
                            BUILD / "halt" / f"out-{config}", tag="-halt")
    if "+" in which:
        combo_tree = worktree.fresh(BUILD / "combo" / which / "linux", "base")
        tree.apply_series(tree.combination(which), combo_tree)
        return kernel.build(config, combo_tree,
                            BUILD / "combo" / which / f"out-{config}",
                            tag=f"-{which}")
    if which in OLD_SERIES:
        old_tree = worktree.fresh(BUILD / which / "linux", "base")
        rev, extras = OLD_SERIES[which]
        files = tree.series_at(rev)
        for extra in extras:
            files += tree.series_at(rev, extra=extra)
        tree.apply_series(files, old_tree)
        return kernel.build(config, old_tree,
                            BUILD / which / f"out-{config}", tag=f"-{which}")
    base_tree = worktree.fresh(BUILD / "bench" / "base-linux", "base")
    return kernel.build(config, base_tree,
                        BUILD / "bench" / f"out-base-{config}", tag="-base")


@dataclass
class Ladder:
    """Where a suite with a boot time limit (SUITE_TIMEOUT_S) stopped:
    the smallest size a boot of which hung, with that boot."""
    cpus: int
    variant: str
    rep: int
    log: str
    limit_s: float


def stops_at(suite: str, verdict: str) -> bool:
    """Whether a boot with this verdict ends its suite's ladder at its
    size."""
    return suite in SUITE_TIMEOUT_S and verdict == judge.HANG


def run_suite(suite: str, reps: int,
              variants: Optional[List[Variant]] = None,
              keep: Optional[Callable[[List[Sample], Optional[Ladder]],
                                      None]] = None,
              sizes: Optional[Sequence[int]] = None) -> List[Sample]:
    """Boot every variant on every machine of the suite (those of `sizes`
    vCPUs if given), `reps` times, interleaved; `keep` gets the samples
    so far after each boot. InfraError if a passing boot went untimed by
    the host's clock (hostcpu.require): its rows would drop out of the
    tables."""
    setups = suite_machines(suite, sizes)
    variants = default_variants(suite) if variants is None else variants
    say("bench: " + tree.create())
    config = SUITE_CONFIG.get(suite, "guest")
    kernels = {which: _build(which, config)
               for which in dict.fromkeys(var.kernel for var in variants)}
    # Every kernel boots every machine, so the smallest NR_CPUS bounds
    nr_cpus = min(boot.kernel_nr_cpus(kern) for kern in kernels.values())
    initrd = initramfs.build()
    samples: List[Sample] = []
    ladder: Optional[Ladder] = None
    steps = Progress(reps * len(setups) * len(variants), "bench")
    for rep in range(1, reps + 1):
        for setup in setups:
            if ladder and setup.cpus >= ladder.cpus:
                continue
            mach = setup.make(nr_cpus)
            for idx, var in enumerate(variants):
                spec = boot.BootSpec(mach, kernels[var.kernel].image, initrd,
                                     var.append, ["cpus"],
                                     label=f"bench-{var.name}-{setup.cpus}",
                                     host_cpu=True,
                                     milestone=SUITE_MILESTONE.get(suite,
                                                                   b""),
                                     timeout=SUITE_TIMEOUT_S.get(suite, 0),
                                     # a big machine may print nothing for
                                     # minutes: only the limit ends it
                                     silence=(0 if suite in SUITE_TIMEOUT_S
                                              else boot.SILENCE_S))
                res = boot.run(spec, quiet=True)
                hostcpu.require(res.verdict, res.host_wall_ms, res.log)
                samples.append(Sample(setup.name, setup.cpus, setup.tcg,
                                      setup.profile, var.name, rep,
                                      res.verdict, res.bringup_ms, res.mode,
                                      res.log, dict(res.phases_us),
                                      res.host_wall_ms, res.host_vcpu_ms,
                                      res.kick_total_us,
                                      res.post_bringup_ms,
                                      res.host_milestone_ms))
                steps.done(f"{setup.name} {var.name} rep {rep}: "
                           f"{res.verdict}, {res.host_wall_ms or '-'} ms "
                           f"by the host, log {res.log}")
                if stops_at(suite, res.verdict) and not ladder:
                    # The other kernels still boot this size, once: which
                    # of them boot it is the finding; no larger size boots
                    ladder = Ladder(setup.cpus, var.name, rep, res.log,
                                    SUITE_TIMEOUT_S[suite])
                    # what is left: this size's other kernels, then the
                    # later reps' smaller sizes
                    left = len(variants) - idx - 1
                    steps.total = steps.count + left + (reps - rep) * len(
                        variants) * sum(size.cpus < ladder.cpus
                                        for size in setups)
                    say(f"bench: {setup.name} did not boot within "
                        f"{SUITE_TIMEOUT_S[suite] / 60:.0f} min; the ladder "
                        f"stops at {setup.cpus} vCPUs, after this size's "
                        f"other kernels")
                if keep:
                    keep(samples, ladder)
    return samples


def command(suite: str, reps: int,
            variants: Optional[List[Variant]] = None,
            sizes: Optional[Sequence[int]] = None) -> str:
    """The command that reruns this suite."""
    subset = variants is not None and variants != default_variants(suite)
    if suite == "quick" and reps == 3 and not subset and not sizes:
        return "make bench"
    if suite == "full" and reps == 3 and not subset and not sizes:
        return "make bench-full"
    return (f"tools/bringup bench --suite {suite} --reps {reps}"
            + (" --cpus " + ",".join(map(str, sizes)) if sizes else "")
            + (" --variants " + ",".join(var.name for var in variants or [])
               if subset else ""))


def results(suite: str, reps: int, variants: Optional[List[Variant]],
            samples: List[Sample], ladder: Optional[Ladder] = None,
            complete: bool = True,
            sizes: Optional[Sequence[int]] = None) -> dict:
    """The results part of a bench record: the samples, and what
    stats.py derives from them; `complete` false while the run goes on
    (the record of a run cut short says so); `sizes`, the vCPU counts
    a run of some of the suite's machines booted."""
    out = {"suite": suite, "reps": reps,
           "command": command(suite, reps, variants, sizes),
           "variants": [var.name for var in variants
                        or default_variants(suite)],
           "complete": complete,
           "stats": stats.medians(samples),
           "floors": [floor.to_dict() for floor in stats.floors(samples)],
           "samples": [asdict(s) for s in samples]}
    if ladder:
        out["ladder_stop"] = asdict(ladder)
    if sizes:
        out["sizes"] = sorted(sizes)
    return out


@dataclass
class _Kept:
    """A run's record file, rewritten after every boot, and its ladder."""
    path: Optional[Path] = None
    ladder: Optional[Ladder] = None

    def write(self, rec: record.Record) -> Path:
        self.path = (record.rewrite(rec, self.path) if self.path
                     else record.save(rec))
        return self.path


def run(suite: str = "quick", reps: int = 3,
        variants: Optional[List[Variant]] = None,
        sizes: Optional[Sequence[int]] = None) -> record.Record:
    """Boot the suite; its record, saved in results/ with the plot, and
    kept current after every boot (a long run cut short leaves what it
    measured, marked incomplete)."""
    started = record.now()
    kept = _Kept()

    def keep(samples: List[Sample], ladder: Optional[Ladder]) -> None:
        kept.ladder = ladder
        kept.write(record.make("bench", False, results(
            suite, reps, variants, samples, ladder, complete=False,
            sizes=sizes), started))

    samples = run_suite(suite, reps, variants, keep, sizes)
    # A ladder that stops is the suite's finding, not a failure of the
    # run: its verdict is that of the boots below that size
    judged = [s for s in samples
              if not kept.ladder or s.cpus < kept.ladder.cpus]
    rec = record.make("bench", bool(judged) and all(
        s.verdict == "pass" for s in judged), results(
            suite, reps, variants, samples, kept.ladder, sizes=sizes),
        started)
    path = kept.write(rec)
    png = plot(samples, stats.medians(samples), path.with_suffix(".png"))
    if suite == "scale":
        # beside the bringup-ms plot, not over it
        png = scale_tables.plot(
            samples, path.with_name(path.stem + "-scale.png")) or png
    say(f"bench: record {path}" + (f", plot {png}" if png else "")
        + f"; to keep it: cp {path} records/ && tools/bringup render "
        f"records/{path.name}")
    return rec
