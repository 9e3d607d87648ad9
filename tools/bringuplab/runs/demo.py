"""`make demo`: the patched kernel on 32 vCPUs, as is and serial; a
`demo` record in results/ (`bringup render` prints its table again)."""
import json
import sys

from bringuplab.build import kernel, tree
from bringuplab.guest import initramfs
from bringuplab.host import packages
from bringuplab.report import record
from bringuplab.runs import matrix
from bringuplab.report.demo_tables import table
from bringuplab.progress import of_boots, say


def run(as_json: bool = False) -> int:
    started = record.now()
    packages.ensure(list(packages.NEEDS))
    say(tree.create())
    rows = matrix.run("demo", kernel.build("guest"), initramfs.build(),
                      expect_modes=bool(tree.series_files()),
                      done=of_boots(len(matrix.entries("demo")), "demo"))
    boots = [dict(matrix.row_record(r), cmdline="default" if
                  r.entry.parallel else matrix.SERIAL) for r in rows]
    ok = all(r.ok for r in rows)
    saved = record.save(record.make("demo", ok, {"boots": boots}, started))
    print(f"lab: demo: record {saved}", file=sys.stderr)
    if as_json:
        print(json.dumps([dict(cmdline=("default" if r.entry.parallel
                                         else matrix.SERIAL), ok=r.ok,
                               **r.result.to_dict()) for r in rows],
                         indent=1))
        return 0 if ok else 1
    print(table(boots))
    if not tree.series_files():
        print("note: patches/ holds no series yet, so both rows are the "
              "base kernel's serial bringup.")
    return 0 if ok else 1
