"""Build every patch of the series in turn, each with every config asked
for, and with --boot boot each patch's guest kernel (`make each-patch`,
`bringup kernel --each`): that every patch builds and boots, not a
search for the patch that broke something."""
from typing import List

from bringuplab.build import kernel, tree, worktree
from bringuplab.guest import boot, initramfs
from bringuplab.errors import LabError, UsageError
from bringuplab.guest.machinespec import MachineSpec
from bringuplab.paths import BUILD
from bringuplab.progress import Progress

# --boot: every patch's guest kernel boots this machine in both modes
BOOT_MACHINE = MachineSpec(8, "1x4x2")
BOOT_MODES = (("parallel", ""), ("serial", "cpuhp.parallel=0"))


def boot_both_modes(num: int, kern: kernel.Kernel) -> List[str]:
    """Boot `kern` on 8 vCPUs with a hotplug cycle, in both modes; the
    modes whose boot did not pass, with the verdict."""
    initrd = initramfs.build(kernel=kern.image)
    failed = []
    for mode, append in BOOT_MODES:
        spec = boot.BootSpec(BOOT_MACHINE.make(), kern.image, initrd,
                             append,
                             plan=["cpus", "hotplug"],
                             label=f"each-patch-{num:02d}-{mode}")
        res = boot.run(spec, quiet=True)
        if res.verdict != "pass":
            failed.append(f"{mode}: {res.verdict} "
                          f"({'; '.join(res.reasons)[:120]}, {res.log})")
    return failed


def run(configs: List[str], first: int = 1, last: int = 0,
        boot_each: bool = False) -> int:
    """Build patches first..last (0: the last one) of base..HEAD with
    each config.

    first > 1 resumes an interrupted run, last stops early (the patches
    a fix touched); the summary says which patches it covered, so a
    partial run is never mistaken for a whole one.
    """
    if last and last < first:
        raise UsageError(f"--to {last}: before --from {first}")
    revs = tree.git(["rev-list", "--reverse", "base..HEAD"]).split()
    if not revs:
        raise UsageError("no commits on top of base in build/linux")
    if not 1 <= first <= len(revs):
        raise UsageError(f"--from {first}: the series has patches 1-"
                         f"{len(revs)}")
    last = last or len(revs)
    if last > len(revs):
        raise UsageError(f"--to {last}: the series has patches 1-"
                         f"{len(revs)}")
    where = BUILD / "each-patch" / "linux"
    failed = 0
    steps = Progress((last - first + 1) * len(configs), "kernel --each")
    for num, rev in enumerate(revs, 1):
        if not first <= num <= last:
            continue
        subject = tree.git(["log", "-1", "--format=%s", rev]).strip()
        worktree.fresh(where, rev)
        for config in configs:
            try:
                kern = kernel.build(config, where,
                                     where.parent / f"out-{config}",
                                     tag=f"-each-patch-{num}")
                state = "ok"
                if boot_each and config == "guest":
                    bad = boot_both_modes(num, kern)
                    state = ("FAIL (boot " + "; ".join(bad) + ")" if bad
                             else "ok, booted 8 vCPUs in both modes")
                    failed += 1 if bad else 0
            except LabError as err:
                state, failed = f"FAIL ({err})", failed + 1
            print(f"each-patch: {num:02d}/{len(revs)} {config}: {state}: "
                  f"{subject}", flush=True)
            steps.done(f"patch {num} {config}")
    builds = (last - first + 1) * len(configs)
    print(f"each-patch: patches {first}-{last} of {len(revs)}: "
          f"{builds - failed} passed, {failed} failed")
    return 1 if failed else 0
