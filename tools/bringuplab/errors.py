"""The errors the lab raises, each with the exit status the CLI gives it.

  0  pass
  1  a test failed (a boot, a check, a benchmark boot)
  2  usage: bad input, or a state of the developer's tree to fix first
  3  infrastructure: a build, a series that does not apply, a missing or
     refusing QEMU, apt, a file of the lab itself

A bare LabError is a usage error (exit 2); say InfraError where the
machinery failed rather than the request. A run of many tests (check,
matrix, soak) goes on past an infrastructure error and counts it apart
from the failures: exit_status() says what the counts mean.
"""


class LabError(Exception):
    """An error the CLI prints as a single line (no traceback)."""

    exit_code = 2


class UsageError(LabError):
    """The command line or the developer's tree asks for what cannot be
    done."""

    exit_code = 2


class InfraError(LabError):
    """A step of the lab's machinery failed: nothing to do with the
    kernel under test or the command line."""

    exit_code = 3


class BootFailed(LabError):
    """A boot that had to pass did not: a test failure, not an error of
    the lab."""

    exit_code = 1


class SeriesDoesNotApply(InfraError):
    """`git am` of patches/ failed: exit 3 for a command that needed the
    tree, but in `make check` a failure of the series, not of the lab."""


class QemuRefused(InfraError):
    """QEMU would not start the machine; `log` keeps what it said."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


def exit_status(failed: int, infra: int) -> int:
    """The exit status of a run of many tests: 1 if one failed, whatever
    else happened; 3 if none failed but the lab's machinery did (a boot
    QEMU refused); else 0."""
    if failed:
        return BootFailed.exit_code
    return InfraError.exit_code if infra else 0
