"""The CLI's conventions: exit statuses, `bringup` alone, closed pipes."""
import subprocess
import sys
from pathlib import Path

import pytest

from bringuplab import cli
from bringuplab.build import tree
import closedpipe
from bringuplab.errors import BootFailed, InfraError, LabError, UsageError

BRINGUP = Path(__file__).resolve().parents[1] / "tools" / "bringup"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BRINGUP), *args],
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize("error,code", [
    (UsageError("bad"), 2), (LabError("bad"), 2), (InfraError("bad"), 3),
    (BootFailed("bad"), 1)])
def test_exit_status_says_what_kind_of_error(monkeypatch, capsys, error,
                                             code):
    def fail(reset: bool = False) -> str:
        raise error
    monkeypatch.setattr(tree, "create", fail)
    monkeypatch.setattr(cli.packages, "ensure", lambda stages: None)
    assert cli.main(["tree"]) == code
    err = capsys.readouterr().err
    assert err == "bringup: error: bad\n"


def test_infrastructure_failures_are_infra_errors():
    """What the issue names: a failed build, a series that does not
    apply, a missing QEMU; and a failed host command."""
    from bringuplab import run as runmod
    from bringuplab.build import kernel
    with pytest.raises(InfraError):
        runmod.output(["/nonexistent/command"])
    with pytest.raises(InfraError):
        runmod.run(["false"], quiet=True)
    with pytest.raises(InfraError):
        kernel.build("guest", Path("/nonexistent"))
    assert issubclass(cli.boot.QemuRefused, InfraError)


def test_usage_errors_exit_2_and_do_not_look_like_infra():
    proc = run("boot", "--cpus", "3", "--topology", "2x2x1")
    assert proc.returncode == 2, proc.stderr
    proc = run("bench", "--suite", "huge")
    assert proc.returncode == 2, proc.stderr


def test_bringup_alone_lists_every_command():
    proc = run()
    assert proc.returncode == 0, proc.stderr
    assert "required" not in proc.stdout + proc.stderr
    listed = proc.stdout.split("commands:", 1)[1]
    for name in cli.COMMANDS:
        assert f"\n    {name}" in listed, name
    assert "exit status" in proc.stdout


def test_a_closed_pipe_ends_quietly():
    """`bringup ... | head`: the reader is gone before the lab writes."""
    closedpipe.ends_quietly([])


def test_kernel_help_lists_every_flavour():
    from bringuplab.build import kconfig
    proc = run("kernel", "--help")
    text = " ".join(proc.stdout.split())
    for name in kconfig.FLAVOURS:
        assert name in text, name


def test_no_lab_module_shadows_a_standard_module():
    """A module of the lab named like one of the standard library (it
    had a bisect.py) hides it from any script run from tools/bringuplab
    and misleads the reader."""
    package = Path(cli.__file__).parent
    mine = {p.stem for p in package.rglob("*.py")} - {"__init__"}
    mine |= {p.parent.name for p in package.rglob("*/__init__.py")}
    assert not mine & set(sys.stdlib_module_names)
    assert {"each_patch", "runs", "verdict"} <= mine
