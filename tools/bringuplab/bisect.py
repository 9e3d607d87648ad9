"""Compile-test every patch of the series in turn (bisectability)."""
from typing import List

from . import kernel, tree, worktree
from .errors import LabError
from .paths import BUILD


def run(configs: List[str]) -> int:
    revs = tree.git(["rev-list", "--reverse", "base..HEAD"]).split()
    if not revs:
        raise LabError("no commits on top of base in build/linux")
    where = BUILD / "bisect" / "linux"
    failed = 0
    for num, rev in enumerate(revs, 1):
        subject = tree.git(["log", "-1", "--format=%s", rev]).strip()
        worktree.fresh(where, rev)
        for config in configs:
            try:
                kernel.build(config, where, where.parent / f"out-{config}",
                             tag=f"-bisect-{num}")
                state = "ok"
            except LabError as err:
                state, failed = f"FAIL ({err})", failed + 1
            print(f"bisect: {num:02d}/{len(revs)} {config}: {state}: "
                  f"{subject}", flush=True)
    print(f"{len(revs) * len(configs) - failed} passed, {failed} failed")
    return 1 if failed else 0
