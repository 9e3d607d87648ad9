"""Scratch git worktrees of build/linux, so checks never touch the
developer's own tree."""
import shutil
import subprocess
from pathlib import Path

from bringuplab.paths import TREE
from bringuplab.run import output


def fresh(path: Path, rev: str = "base", tree: Path = TREE) -> Path:
    """A detached worktree of `tree` at `rev` (reused if it exists)."""
    if (path / ".git").exists():
        subprocess.run(["git", "-C", str(path), "am", "--abort"],
                       capture_output=True, check=False)
        output(["git", "-C", str(path), "checkout", "-q", "--detach", "-f",
                rev])
        return path
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run(["git", "-C", str(tree), "worktree", "prune"],
                   capture_output=True, check=False)
    output(["git", "-C", str(tree), "worktree", "add", "-q", "--detach",
            str(path), rev])
    return path


def remove(path: Path, tree: Path = TREE) -> bool:
    """Delete the worktree at `path` if there is one; whether it was."""
    if not path.exists():
        return False
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run(["git", "-C", str(tree), "worktree", "prune"],
                   capture_output=True, check=False)
    return True
