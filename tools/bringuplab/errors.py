"""The one exception the lab raises for bad input or a failed step."""


class LabError(Exception):
    """An error the CLI prints as a single line (no traceback)."""


class QemuRefused(LabError):
    """QEMU would not start the machine; `log` keeps what it said."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log
