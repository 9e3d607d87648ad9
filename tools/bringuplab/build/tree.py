"""The kernel work tree: base tarball -> git repo tagged `base` -> series.

`create` is idempotent and all-or-nothing: a series that does not apply
names the failing patch and leaves the tree at `base`.
"""
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import List, Optional

from bringuplab.build import base as basemod
from bringuplab.host import diskspace
from bringuplab.errors import InfraError, SeriesDoesNotApply, UsageError
from bringuplab.paths import BUILD, PATCHES, ROOT, TREE
from bringuplab.run import output

COVER = "0000-cover-letter.patch"
IDENTITY = ["-c", "user.name=Bringup Lab", "-c", "user.email=lab@localhost"]


def git(args: List[str], tree: Path = TREE) -> str:
    return output(["git", "-C", str(tree), *IDENTITY, *args])


def series_files(patches: Path = PATCHES) -> List[Path]:
    """The numbered patches of the series, in order (no cover letter)."""
    return sorted(p for p in patches.glob("*.patch") if p.name != COVER)


def extra_names(patches: Path = PATCHES) -> List[str]:
    """The split-out series: each a directory of patches/ with its own
    NNNN-*.patch files, applying on the base alone and on top of the
    main series (docs/series.md)."""
    if not patches.is_dir():
        return []
    return sorted(d.name for d in patches.iterdir()
                  if d.is_dir() and series_files(d))


def extra_files(name: str, patches: Path = PATCHES) -> List[Path]:
    """The patches of the split-out series `name`."""
    known = extra_names(patches)
    if name not in known:
        raise UsageError(f"unknown series '{name}' (known: "
                         f"{', '.join(known) or 'none'})")
    return series_files(patches / name)


def combination(which: str, patches: Path = PATCHES) -> List[Path]:
    """The patches of a kernel named `ours`, `base`, or either followed by
    `+NAME` for each split-out series on top: `ours+calibration` is the
    main series and then the calibration series."""
    onto, *names = which.split("+")
    if onto not in ("ours", "base"):
        raise UsageError(f"'{which}': starts with 'ours' or 'base'")
    files = series_files(patches) if onto == "ours" else []
    for name in names:
        files += extra_files(name, patches)
    return files


def series_at(rev: str, repo: Path = ROOT, extra: str = "") -> List[Path]:
    """The series as patches/ held it at `rev` of this repository (a tag
    such as series-v1), written out under build/series-REV/; with
    `extra`, the split-out series patches/EXTRA/ instead."""
    where = f"patches/{extra}" if extra else "patches"
    dest = BUILD / f"series-{rev}"
    if extra:
        dest = dest / extra
    names = output(["git", "-C", str(repo), "ls-tree", "--name-only",
                    f"{rev}:{where}"]).split()
    names = [n for n in names if re.fullmatch(r"\d{4}-.*\.patch", n)
             and not n.startswith("0000-")]
    if not names:
        raise InfraError(f"no series in {where}/ at {rev}")
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for name in names:
        text = output(["git", "-C", str(repo), "show", f"{rev}:{where}/{name}"])
        (dest / name).write_text(text)
    return [dest / n for n in sorted(names)]


def patch_id(diff: str) -> str:
    proc = subprocess.run(["git", "patch-id", "--stable"], input=diff,
                          capture_output=True, text=True, check=False)
    return proc.stdout.split()[0] if proc.stdout.split() else ""


def tree_ids(tree: Path = TREE) -> List[str]:
    revs = git(["rev-list", "--reverse", "base..HEAD"], tree).split()
    return [patch_id(git(["show", "--format=", rev], tree)) for rev in revs]


def strip_debian_ignore(gitignore: Path) -> None:
    """Drop Debian's 'ignore everything at the top level' block.

    linux-source ships a .gitignore whose last rule is `/*`, which would
    hide every new file of the series from `git status`.
    """
    lines = gitignore.read_text().split("\n")
    marks = [i for i, line in enumerate(lines)
             if line.startswith("# Debian packaging")]
    if not marks:
        return
    cut = marks[0]
    while cut > 0 and lines[cut - 1].strip() in ("#", ""):
        cut -= 1
    gitignore.write_text("\n".join(lines[:cut]) + "\n")


def unpack(base: basemod.Base, dest: Path = TREE) -> None:
    """Unpack the base tarball into dest as a git repo tagged `base`."""
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    print(f"lab: unpacking {base.tarball}", file=sys.stderr)
    try:
        with tarfile.open(base.tarball) as tar:
            tar.extractall(tmp)  # trusted: checksummed Debian tarball
    except (tarfile.TarError, OSError, EOFError) as err:
        shutil.rmtree(tmp, ignore_errors=True)
        raise InfraError(f"cannot unpack {base.tarball}: {err}") from None
    tops = list(tmp.iterdir())
    if len(tops) != 1 or not (tops[0] / "Makefile").is_file():
        shutil.rmtree(tmp, ignore_errors=True)
        raise InfraError(f"{base.tarball} does not hold one kernel tree")
    src = tops[0]
    strip_debian_ignore(src / ".gitignore")
    output(["git", "init", "-q", "-b", "main", str(src)])
    git(["add", "-A"], src)
    git(["commit", "-q", "-m",
         f"Base: Debian {base.package} {base.version}"], src)
    git(["tag", "base"], src)
    shutil.rmtree(dest, ignore_errors=True)
    src.rename(dest)
    shutil.rmtree(tmp, ignore_errors=True)


def apply_series(patches: List[Path], tree: Path = TREE) -> None:
    """git am the series on base, or leave the tree at base and fail."""
    git(["reset", "-q", "--hard", "base"], tree)
    if not patches:
        return
    proc = subprocess.run(["git", "-C", str(tree), *IDENTITY, "am", "-q",
                           *map(str, patches)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        msg = (proc.stdout + proc.stderr).strip().splitlines()
        failed = next((line for line in msg
                       if line.startswith("Patch failed at")), "")
        # git's no-space line first: the check counts it as the
        # machine's, not the series' (check.Tally.guard)
        said = ([line for line in msg if diskspace.says_no_space(line)]
                + [line for line in msg if line.startswith("error:")]
                + msg[:1])
        detail = said[0] if said else ""
        subprocess.run(["git", "-C", str(tree), "am", "--abort"],
                       capture_output=True, check=False)
        git(["reset", "-q", "--hard", "base"], tree)
        raise SeriesDoesNotApply(
            f"series does not apply: {failed or 'git am failed'}"
            f" ({detail}); tree left at base")


def is_tree(tree: Path = TREE) -> bool:
    return (tree / ".git").exists() and subprocess.run(
        ["git", "-C", str(tree), "rev-parse", "-q", "--verify",
         "refs/tags/base"], capture_output=True, check=False).returncode == 0


def create(reset: bool = False, tree: Path = TREE,
           patches: Optional[List[Path]] = None) -> str:
    """Make `tree` hold base + series. Returns what was done."""
    patches = series_files() if patches is None else patches
    if not is_tree(tree):
        pinned = basemod.load()
        unpack(basemod.fetch(pinned), tree)
    if git(["status", "--porcelain", "--untracked-files=no"], tree).strip():
        raise UsageError(f"{tree} has uncommitted changes; commit them and "
                         "run `bringup export`, or `git stash` them")
    want = [patch_id(p.read_text(errors="replace")) for p in patches]
    have = tree_ids(tree)
    if have == want:
        return f"tree up to date: base + {len(want)} patches"
    if have and not reset:
        raise UsageError(f"{tree} holds {len(have)} commits that differ "
                         "from patches/: `bringup export` them, or rebuild "
                         "the tree with `bringup tree --reset`")
    apply_series(patches, tree)
    return f"tree at base + {len(patches)} patches"


def export(tree: Path = TREE, patches: Path = PATCHES) -> int:
    """Write base..HEAD as patches/NNNN-*.patch; keep the cover letter."""
    if not is_tree(tree):
        raise InfraError(f"no work tree at {tree}: run `bringup tree` first")
    if git(["status", "--porcelain", "--untracked-files=no"], tree).strip():
        raise UsageError(f"{tree} has uncommitted changes; commit them first")
    tmp = BUILD / "export.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    git(["format-patch", "-q", "--zero-commit", "--no-signature",
         "-o", str(tmp), "base..HEAD"], tree)
    patches.mkdir(exist_ok=True)
    for old in series_files(patches):
        old.unlink()
    count = 0
    for new in sorted(tmp.glob("*.patch")):
        shutil.move(str(new), patches / new.name)
        count += 1
    shutil.rmtree(tmp, ignore_errors=True)
    return count
