"""The kernels and modes a bench boots (its variants), as data: what
bench.py builds and boots and what bench_tables.py orders its rows by."""
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from bringuplab.errors import UsageError


@dataclass(frozen=True)
class Variant:
    name: str
    # ours | halt | v1 | upstream | base, or ours/base + split-out
    # series (tree.combination())
    kernel: str
    append: str
    # Booted only when --variants names it
    experiment: bool = False


VARIANTS = [Variant("ours-parallel", "ours", ""),
            Variant("ours-serial", "ours", "cpuhp.parallel=0"),
            # The series plus the experiment in HALT_PATCH: APs halt
            # instead of spinning while they wait for their release.
            Variant("halt-parallel", "halt", "", experiment=True),
            Variant("halt-serial", "halt", "cpuhp.parallel=0",
                    experiment=True),
            # The first version of the series (git tag series-v1), with
            # its per-phase report ("bringup_timing").
            Variant("v1-parallel", "v1", "bringup_timing"),
            Variant("v1-serial", "v1", "bringup_timing cpuhp.parallel=0"),
            # v1 without its start-ahead window (v2 dropped it): every AP
            # started at once, as in v2 and upstream
            # The second version of the series (patches/ at V2_REV)
            Variant("v2-parallel", "v2", "", experiment=True),
            Variant("v2-serial", "v2", "cpuhp.parallel=0", experiment=True),
            # v3 as first sent (patches/ at V3_REV with the calibration
            # and workqueue series), for what changed since
            Variant("v3-parallel", "v3", "", experiment=True),
            Variant("v3-serial", "v3", "cpuhp.parallel=0", experiment=True),
            Variant("v1-nowindow", "v1",
                    "bringup_timing cpuhp.parallel_window=4096"),
            # The same two without any TSC test at bringup (tsc=reliable:
            # every AP skips it, in v1 also the all-CPU test v2 dropped),
            # so that what v1's test costs comes apart from the rest
            Variant("ours-tscreliable", "ours", "tsc=reliable",
                    experiment=True),
            Variant("v1-nowindow-tscreliable", "v1",
                    "bringup_timing cpuhp.parallel_window=4096 "
                    "tsc=reliable", experiment=True),
            Variant("upstream-parallel", "upstream", ""),
            Variant("upstream-serial", "upstream", "cpuhp.parallel=0"),
            # The kernel the series applies to: what an operator runs today.
            Variant("base-serial", "base", ""),
            # The split-out series (patches/<name>/), each on top of the
            # main series and on the base alone
            Variant("ours+calibration-parallel", "ours+calibration", "",
                    experiment=True),
            Variant("ours+workqueue-parallel", "ours+workqueue", "",
                    experiment=True),
            Variant("ours+scaling-parallel", "ours+scaling", "",
                    experiment=True),
            # v3: the main series with the calibration and workqueue
            # series
            Variant("ours+calibration+workqueue-parallel",
                    "ours+calibration+workqueue", "", experiment=True),
            Variant("ours+calibration+workqueue-serial",
                    "ours+calibration+workqueue", "cpuhp.parallel=0",
                    experiment=True),
            # v3 and the series that cuts the per-AP work which grows
            # with the number of CPUs (patches/scaling/)
            Variant("ours+calibration+workqueue+scaling-parallel",
                    "ours+calibration+workqueue+scaling", "",
                    experiment=True),
            Variant("ours+calibration+workqueue+scaling-serial",
                    "ours+calibration+workqueue+scaling",
                    "cpuhp.parallel=0", experiment=True),
            Variant("base+calibration-serial", "base+calibration", "",
                    experiment=True),
            Variant("base+workqueue-serial", "base+workqueue", "",
                    experiment=True),
            Variant("base+scaling-serial", "base+scaling", "",
                    experiment=True)]


# The variants a suite boots without --variants; every one otherwise.
# The targets need the series in both modes, v1, upstream and the base
# in the mode they ship in.
SUITE_VARIANTS: Dict[str, Tuple[str, ...]] = {
    "targets": ("ours+calibration+workqueue-parallel",
                "ours+calibration+workqueue-serial", "ours-parallel",
                "upstream-parallel", "base-serial"),
    # How the cost per AP grows with the machine: v3 with every
    # split-out series (the scaling series is the one that cuts the
    # per-AP work growing with N) in both modes, upstream's parallel
    # bringup (which reuses CPU 0's delay calibration too) and the base
    "scale": ("ours+calibration+workqueue+scaling-parallel",
              "ours+calibration+workqueue+scaling-serial",
              "upstream-parallel", "base-serial"),
    "extras": ("ours-parallel", "ours+calibration-parallel",
               "ours+workqueue-parallel", "ours+scaling-parallel",
               "base-serial", "base+calibration-serial",
               "base+workqueue-serial", "base+scaling-serial")}


def default_variants(suite: str) -> List[Variant]:
    names = SUITE_VARIANTS.get(suite)
    if names is None:
        return [var for var in VARIANTS if not var.experiment]
    return [var for var in VARIANTS if var.name in names]


def pick_variants(names: Optional[str], suite: str = "quick"
                  ) -> List[Variant]:
    """The variants a comma list names, in the order of VARIANTS; the
    suite's default ones for None. Fewer variants mean more reps in the
    same time for the ratios that matter."""
    if names is None:
        return default_variants(suite)
    wanted = {name.strip() for name in names.split(",") if name.strip()}
    known = {var.name for var in VARIANTS}
    unknown = sorted(wanted - known)
    if unknown:
        raise UsageError(f"unknown variant '{unknown[0]}' (known: "
                         f"{', '.join(var.name for var in VARIANTS)})")
    if not wanted:
        raise UsageError("--variants names no variant")
    return [var for var in VARIANTS if var.name in wanted]
