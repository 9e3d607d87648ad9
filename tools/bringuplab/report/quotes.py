"""Figures quoted from records (README.md, docs/, the series' own text
in patches/) come from clean records of the code they speak of:

- every record cited is one of a clean tree: no uncommitted change to
  the lab or to patches/ when it ran (a buildtest record: none to the
  repository);
- a record the series' text cites (changelogs, cover letter) measured
  the code patches/ holds now (record.series_code(): the patches'
  diffs, so a changelog edit does not void it);
- README.md and docs/ may cite a record of other code only in a
  paragraph that says so ("earlier revision"); the README's Status
  block names each record's revision in its own rows.

`make check` fails on any citation that breaks a rule (check.py).
"""
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Tuple

from bringuplab.report import record
from bringuplab.errors import InfraError
from bringuplab.paths import ROOT

CITE = re.compile(r"records/[\w.-]+\.json")
SAYS_EARLIER = re.compile(r"\b(?:earlier|older) revision", re.I)
STATUS = re.compile(r"<!-- status:begin -->.*?<!-- status:end -->", re.S)


@dataclass(frozen=True)
class Cited:
    file: str                  # relative to the repository
    line: int
    record: str                # records/NAME.json
    paragraph: str             # the text around it, blank line to blank
    status: bool = False       # in the README's generated Status block


def texts(root: Path) -> List[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md")),
            *sorted((root / "patches").rglob("*.patch"))]


def paragraphs(text: str) -> Iterator[Tuple[int, str]]:
    """(first line number, paragraph) of a text, split at blank lines."""
    start, lines = 1, []
    # "\n" only: splitlines() would also split at a form feed, and the
    # paragraph would not be found in the text again
    for num, line in enumerate(text.split("\n") + [""], 1):
        if line.strip():
            if not lines:
                start = num
            lines.append(line)
        elif lines:
            yield start, "\n".join(lines)
            lines = []


def citations(root: Path = ROOT) -> List[Cited]:
    found = []
    for path in texts(root):
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        status = [m.span() for m in STATUS.finditer(text)]
        offset = 0
        for start, para in paragraphs(text):
            offset = text.index(para, offset)
            in_status = any(a <= offset < b for a, b in status)
            for match in CITE.finditer(para):
                line = start + para.count("\n", 0, match.start())
                found.append(Cited(str(path.relative_to(root)), line,
                                   match.group(0), para, in_status))
    return found


@dataclass(frozen=True)
class Origin:
    clean: bool
    patches_revision: str      # "" if the record does not say


def origin(path: Path) -> Origin:
    """Whether a record's run was of a clean tree, and its patches/
    revision; a record without provenance cannot show it was clean."""
    data = json.loads(path.read_text())
    prov = data.get("provenance")
    if prov:
        return Origin(not prov.get("lab_dirty", True)
                      and not prov.get("patches_dirty", True),
                      prov.get("patches_revision", ""))
    repo = data.get("repo")
    if repo:      # buildtest's records
        return Origin(repo.get("dirty") is False, repo.get("head", ""))
    return Origin(False, "")


def problems(root: Path = ROOT,
             code_of: Callable[[str], str] = record.series_code
             ) -> List[str]:
    """Each citation that breaks a rule, as 'file:line: record: why';
    InfraError without the history to tell the series' codes apart."""
    codes: Dict[str, str] = {}

    def code(rev: str) -> str:
        if rev not in codes:
            codes[rev] = code_of(rev) if rev else record.UNKNOWN
        return codes[rev]
    now = code("HEAD")
    if now == record.UNKNOWN:
        raise InfraError("cannot tell which code a record measured: "
                         "patches/ has no git history here (a shallow "
                         "clone, or no clone)")
    out = []
    for cited in citations(root):
        where = f"{cited.file}:{cited.line}: {cited.record}"
        path = root / cited.record
        if not path.is_file():
            out.append(f"{where}: no such record")
            continue
        try:
            born = origin(path)
        except (OSError, ValueError, AttributeError):
            out.append(f"{where}: not a record the lab can read")
            continue
        if not born.clean:
            out.append(f"{where}: made from a tree with uncommitted "
                       "changes (or one that does not say)")
        same = code(born.patches_revision) == now
        if same or cited.status:
            continue
        rev = born.patches_revision[:7] or "?"
        if cited.file.startswith("patches/"):
            out.append(f"{where}: measured patches/ of {rev}, whose code "
                       "is not the series' now")
        elif not SAYS_EARLIER.search(cited.paragraph):
            out.append(f"{where}: measured patches/ of {rev}, other code "
                       "than now, and its paragraph does not say so "
                       "(\"earlier revision\")")
    return out
