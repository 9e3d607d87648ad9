"""checkpatch.pl --strict over every patch, with kept justifications.

patches/checkpatch-exceptions lists accepted findings, one per line:
`<patch file name> <TYPE> <why it is right as it is>`. The patch is named
without its number (`NNNN-`), which changes whenever patches are added
or reordered.
"""
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Set

from bringuplab.errors import InfraError
from bringuplab.paths import PATCHES, TREE
from bringuplab.build.tree import extra_names, series_files

EXCEPTIONS = PATCHES / "checkpatch-exceptions"


def patch_key(name: str) -> str:
    """A patch file name without its series number."""
    return re.sub(r"^\d{4}-", "", name)


@dataclass
class PatchReport:
    patch: str
    findings: List[str]      # "WARNING:TYPE: message" not excused
    excused: int


def exceptions(path: Path = EXCEPTIONS) -> Dict[str, Set[str]]:
    allowed: Dict[str, Set[str]] = {}
    if not path.is_file():
        return allowed
    for num, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        if len(parts) < 3:
            raise InfraError(f"{path}:{num}: want '<patch> <TYPE> <why>'")
        allowed.setdefault(patch_key(parts[0]), set()).add(parts[1])
    return allowed


def check(patch: Path, allowed: Set[str], tree: Path = TREE,
          label: str = "") -> PatchReport:
    script = tree / "scripts/checkpatch.pl"
    if not script.is_file():
        raise InfraError(f"no {script}: run `bringup tree` first")
    proc = subprocess.run(["perl", str(script), "--strict", "--show-types",
                           "--no-summary", "--terse", str(patch)],
                          cwd=tree, capture_output=True, text=True,
                          check=False)
    findings, excused = [], 0
    label = label or patch.name
    for line in proc.stdout.splitlines():
        match = re.search(r"(ERROR|WARNING|CHECK):([A-Z0-9_]+):", line)
        if not match:
            continue
        if match.group(2) in allowed:
            excused += 1
        else:
            findings.append(line.split(": ", 1)[-1] if ": " in line
                            else line)
    return PatchReport(label, findings, excused)


def check_all(patches: Path = PATCHES, tree: Path = TREE) -> List[PatchReport]:
    """The main series, then each split-out series (named dir/patch)."""
    allowed = exceptions(patches / "checkpatch-exceptions")
    files = series_files(patches) + [
        p for name in extra_names(patches)
        for p in series_files(patches / name)]
    return [check(p, allowed.get(patch_key(p.name), set()), tree,
                  str(p.relative_to(patches)))
            for p in files]
