"""`make demo`: the patched kernel on 32 vCPUs, as is and serial."""
import json

from . import initramfs, kernel, matrix, packages, report, tree
from .progress import of_boots, say


def run(as_json: bool = False) -> int:
    packages.ensure(list(packages.NEEDS))
    say(tree.create())
    rows = matrix.run("demo", kernel.build("guest"), initramfs.build(),
                      expect_modes=bool(tree.series_files()),
                      done=of_boots(len(matrix.entries("demo")), "demo"))
    if as_json:
        print(json.dumps([dict(cmdline=("default" if r.entry.parallel
                                         else matrix.SERIAL), ok=r.ok,
                               **r.result.to_dict()) for r in rows],
                         indent=1))
        return 0 if all(r.ok for r in rows) else 1
    body = [[("default" if r.entry.parallel else matrix.SERIAL),
             r.result.mode or "serial (no mode line: base kernel)",
             f"{r.result.cpus_online}/{r.result.cpus_expected}",
             report.fmt_ms(r.result.bringup_ms), r.result.verdict]
            for r in rows]
    print(report.table(["kernel command line", "mode", "CPUs online",
                        "bringup ms", "verdict"], body))
    if not tree.series_files():
        print("note: patches/ holds no series yet, so both rows are the "
              "base kernel's serial bringup.")
    return 0 if all(r.ok for r in rows) else 1
