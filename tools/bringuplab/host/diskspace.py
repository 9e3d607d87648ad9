"""Disk space for the lab's trees and builds, asked for before a long
run writes them: a file system that fills up halfway through a check
breaks `git` or `make` in ways that read like a broken series.

A run names its parts with their sizes (`make check`'s, measured by
`du -sh` after a fresh clone's run: CHECK_PARTS in runs/check.py); a
part already on disk needs nothing more.
"""
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

GIB = 1 << 30

# What a write that found the disk full says (strerror(ENOSPC)), in the
# output of git, make or the compiler.
NO_SPACE = "No space left on device"


@dataclass(frozen=True)
class Part:
    """Something a run writes under build/, and its size once written."""
    path: Path
    size: int


@dataclass(frozen=True)
class Space:
    free: int          # bytes the file system of build/ has free
    need: int          # bytes the parts not yet on disk will take

    @property
    def enough(self) -> bool:
        return self.free >= self.need

    def line(self) -> str:
        """'N GiB free, M GiB needed' (one decimal), and what to do when
        that is not enough."""
        said = (f"{self.free / GIB:.1f} GiB free, "
                f"{self.need / GIB:.1f} GiB needed")
        return said if self.enough else (
            f"{said}: free some, or run on a larger disk")


def existing(path: Path) -> Path:
    """`path` or its nearest ancestor on disk (the file system it will
    be written to)."""
    for where in (path, *path.parents):
        if where.exists():
            return where
    return Path("/")


def free_bytes(path: Path) -> int:
    return shutil.disk_usage(existing(path)).free


def space(where: Path, parts: Iterable[Part], margin: int,
          free: Optional[int] = None) -> Space:
    """The space `parts` still need at `where` (those whose path does
    not exist yet, plus `margin` for logs, ccache and the build's own
    scratch files), against what is free there."""
    need = margin + sum(p.size for p in parts if not p.path.exists())
    return Space(free_bytes(where) if free is None else free, need)


def says_no_space(text: str) -> bool:
    """Whether an error's text is a write that found the disk full."""
    return NO_SPACE in text

