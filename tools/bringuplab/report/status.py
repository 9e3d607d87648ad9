"""`bringup status`: the README's Status section, from records.

One row per kind of run (check, bench, soak, buildtest): the newest
record of that kind in records/, or the records named. `make status`
writes it into README.md between STATUS_BEGIN and STATUS_END, so the
section is never typed by hand.
"""
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

from bringuplab.report import bench_tables, record, render
from bringuplab.errors import UsageError
from bringuplab.paths import ROOT

RECORDS = ROOT / "records"
KINDS = ("check", "bench", "soak", "buildtest")
STATUS_BEGIN = "<!-- status:begin -->"
STATUS_END = "<!-- status:end -->"
COMMAND = "make status"


@dataclass
class Row:
    kind: str
    command: str
    ok: bool
    passed: Optional[int]
    failed: Optional[int]
    took: str           # "35 min", "" if unknown
    lab: str            # revision of the lab, "" if unknown
    path: Path
    not_run: int = 0    # of what the run set out to do: cut off before

    def cells(self) -> List[str]:
        verdict = "pass" if self.ok else "fail"
        if self.not_run:
            verdict += f" (cut off, {self.not_run} not run)"
        return [f"`{self.command}`", verdict,
                "-" if self.passed is None else str(self.passed),
                "-" if self.failed is None else str(self.failed),
                self.took or "-", self.lab or "-", f"`{shown(self.path)}`"]


def shown(path: Path) -> str:
    """A path as the README names it: from the repository's top."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _counts(results: dict, kind: str) -> tuple:
    if kind == "bench":
        samples = results.get("samples", [])
        bad = sum(s.get("verdict") != "pass" for s in samples)
        return len(samples) - bad, bad
    return results.get("passed"), results.get("failed")


def buildtest_row(data: dict, path: Path) -> Row:
    """buildtest.run()'s record (a format of its own, no kind)."""
    failed = int(data.get("failed", 0))
    secs = data.get("seconds")
    argv = data.get("argv") or ["make", "buildtest"]
    head = str((data.get("repo") or {}).get("head", ""))[:7]
    return Row("buildtest", " ".join(argv), not failed, data.get("passed"),
               failed, f"{secs / 60:.0f} min" if secs else "", head, path,
               len(data.get("not_built") or []))


def row_of(path: Path) -> Row:
    """The status of one record file; UsageError if it is none."""
    data = record.read_json(path)
    if isinstance(data, dict) and "targets" in data and "kind" not in data:
        return buildtest_row(data, path)
    rec = record.load(path)
    prov = rec.provenance
    command = rec.results.get("command") or (
        " ".join(prov.argv) if prov else rec.kind)
    lab = ""
    took = ""
    if prov:
        lab = prov.lab_revision[:7] + ("+" if prov.lab_dirty else "")
        took = render.took(prov).strip(" ()")
    passed, failed = _counts(rec.results, rec.kind)
    # what a run cut off did not do: a soak's boots, buildtest's targets
    not_run = rec.results.get("not_run") or len(
        rec.results.get("not_built") or [])
    return Row(rec.kind, command, rec.ok, passed, failed, took, lab, path,
               int(not_run))


def target_lines(path: Path) -> List[str]:
    """The series' targets (bench_tables.TARGETS) as a bench record meets
    or misses them, one bullet each; none if the record has no pair."""
    try:
        rows = bench_tables.target_rows(
            render.samples_of(record.load(path).results))
    except UsageError:      # samples which are not boots: no targets
        return []
    if not rows:
        return []
    return ["Its targets (`bench_tables.TARGETS`, per-rep medians):", ""] + [
        f"- {machine}: {ratio} {median}, at most {limit}: **{verdict}**"
        for machine, ratio, median, limit, _, verdict in rows]


# Bench suites with a question of their own, not the series' targets
OWN_QUESTION = ("scale",)


def status_worthy(path: Path) -> bool:
    """Whether a record can stand for its kind: a bench record of the
    series' targets, which a bench run cut short (`complete` false), one
    of some of its suite's machines (`--cpus`: `sizes`) or a suite of
    OWN_QUESTION is not; a buildtest of every target, which one of the
    targets `--only` picked is not. (A buildtest cut off says so in its
    row.)"""
    if path.name.startswith("buildtest-"):
        try:
            return "--only" not in row_of(path).command.split()
        except UsageError:
            return True     # row_of says what is wrong with it
    if not path.name.startswith("bench-"):
        return True
    try:
        results = record.load(path).results
    except UsageError:
        return True         # row_of says what is wrong with it
    return results.get("complete") is not False and \
        not results.get("sizes") and \
        results.get("suite") not in OWN_QUESTION


def newest(folder: Path = RECORDS) -> List[Path]:
    """The newest record of each kind in `folder` (names sort by time)
    that can stand for it (status_worthy)."""
    out = []
    for kind in KINDS:
        found = [p for p in sorted(folder.glob(f"{kind}-*.json"))
                 if status_worthy(p)]
        if found:
            out.append(found[-1])
    return out


def markdown(paths: Sequence[Path], folder: Path = RECORDS) -> str:
    """The Status section's body: who wrote it, a row per record, the
    kinds with no record."""
    rows = [row_of(path) for path in paths]
    head = ["run", "verdict", "passed", "failed", "took", "lab", "record"]
    lines = textwrap.wrap(
        f"Written by `{COMMAND}` from the newest records in "
        f"`{shown(folder)}/`; each in full: `tools/bringup render "
        "RECORD`.", 72, break_on_hyphens=False) + ["",
             "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    for row in rows:
        if row.kind == "bench":
            lines += [""] + target_lines(row.path)
    missing = [kind for kind in KINDS
               if kind not in {row.kind for row in rows}]
    if missing:
        lines += [""] + textwrap.wrap("No record yet: " + ", ".join(
            f"`make {kind}`" for kind in missing) + ".", 72,
            break_on_hyphens=False)
    return "\n".join(lines)


def replace_section(text: str, body: str) -> str:
    """`text` with what is between the status markers replaced by
    `body`; UsageError without both markers, in order."""
    start, end = text.find(STATUS_BEGIN), text.find(STATUS_END)
    if start < 0 or end < start:
        raise UsageError(f"no {STATUS_BEGIN} ... {STATUS_END} section "
                         "to rewrite")
    return (text[:start + len(STATUS_BEGIN)] + "\n" + body + "\n"
            + text[end:])


def command(files: Sequence[str], update: Optional[str]) -> int:
    """Print the Status section (or with `update`, rewrite that file's)."""
    paths = [Path(f) for f in files] or newest()
    body = markdown(paths)
    if update:
        target = Path(update)
        try:
            text = target.read_text()
        except OSError as err:
            raise UsageError(f"cannot read {target}: {err.strerror}") \
                from None
        target.write_text(replace_section(text, body))
        print(f"status: {target} rewritten from {len(paths)} record(s)")
    else:
        print(body)
    return 0
