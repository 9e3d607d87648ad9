"""Running host commands with errors turned into InfraError."""
import subprocess
from pathlib import Path
from typing import Optional, Sequence

from bringuplab.errors import InfraError


def run(argv: Sequence[str], cwd: Optional[Path] = None,
        check: bool = True,
        quiet: bool = False) -> subprocess.CompletedProcess:
    """Run argv; on failure raise InfraError with the tail of its output."""
    try:
        proc = subprocess.run(list(argv), cwd=cwd, text=True,
                              stdout=subprocess.PIPE if quiet else None,
                              stderr=subprocess.STDOUT if quiet else None,
                              check=False)
    except FileNotFoundError:
        raise InfraError(f"command not found: {argv[0]}") from None
    if check and proc.returncode != 0:
        tail = ""
        if quiet and proc.stdout:
            tail = ": " + " | ".join(proc.stdout.strip().splitlines()[-3:])
        raise InfraError(f"'{' '.join(argv[:3])}...' failed "
                         f"(exit {proc.returncode}){tail}")
    return proc


def output(argv: Sequence[str], cwd: Optional[Path] = None) -> str:
    """Run argv and return its stdout; raise InfraError on failure."""
    try:
        proc = subprocess.run(list(argv), cwd=cwd, text=True,
                              capture_output=True, check=False)
    except FileNotFoundError:
        raise InfraError(f"command not found: {argv[0]}") from None
    if proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip().splitlines()
        last = msg[-1] if msg else f"exit {proc.returncode}"
        raise InfraError(f"'{' '.join(argv[:3])}...' failed: {last}")
    return proc.stdout
