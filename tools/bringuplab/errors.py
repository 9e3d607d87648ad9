"""The one exception the lab raises for bad input or a failed step."""


class LabError(Exception):
    """An error the CLI prints as a single line (no traceback)."""
