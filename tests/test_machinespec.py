"""One machine, one description: its name, its options on every command
that boots one, the machines of the bench suites and matrix entries."""
import json
from pathlib import Path

import pytest

from bringuplab import cli
from bringuplab.guest import machinespec
from bringuplab.runs import bench, matrix, states_report
from bringuplab.errors import UsageError
from bringuplab.guest.machinespec import SERVER, MachineSpec

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_the_name_says_the_machine():
    assert SERVER.name == "64=2x16x2 numa2 single intel"
    assert MachineSpec(8).name == "8=8x1x1 numa1 single intel"
    assert MachineSpec(16, "2x4x2", 2, "amd", True, "multi").name == \
        "16=2x4x2 numa2 multi amd x2apic"
    assert MachineSpec(8, "2x2x2", x2apic=False).name.endswith(" xapic")
    assert MachineSpec(20, "5x17x2", high=10, memory_mb=1024).name == \
        "20=5x17x2 numa1 single intel high10 1024M"


def test_bench_suites_name_their_machines_as_the_kept_records_do():
    """Records in bench/ key their boots by the machine's name: a suite
    run today must name the same machines the same way."""
    for path, suite in (("quick.json", "quick"), ("rr64.json", "rr64")):
        kept = json.loads((BENCH / path).read_text())
        named = {s["setup"] for s in kept["samples"]}
        assert named == {spec.name for spec in bench.SUITES[suite]}
    assert all(isinstance(spec, MachineSpec)
               for specs in bench.SUITES.values() for spec in specs)


def test_every_suite_and_matrix_machine_can_be_made():
    for suite, specs in bench.SUITES.items():
        # the scale suite's kernels have NR_CPUS=8192 (kconfig/scale)
        nr_cpus = 8192 if suite == "scale" else 512
        for spec in specs:
            assert spec.make(nr_cpus).cpus == spec.cpus
    for entries in matrix.MATRICES.values():
        for entry in entries:
            assert entry.machine.make().cpus == entry.machine.cpus


def parsed(cmd: str, *argv: str):
    return cli.build_parser().parse_args([cmd, *argv])


@pytest.mark.parametrize("cmd,default", [("boot", MachineSpec(4)),
                                         ("compare", SERVER),
                                         ("states", SERVER)])
def test_each_command_has_the_same_machine_options(cmd, default):
    assert machinespec.from_args(parsed(cmd)) == default
    spec = MachineSpec(16, "2x4x2", 2, "amd", True, "multi", 2048)
    argv = spec.options(default)
    assert machinespec.from_args(parsed(cmd, *argv)) == spec
    assert machinespec.from_args(parsed(cmd, "--no-x2apic")).x2apic is False


def test_options_name_only_what_differs_from_the_default():
    assert SERVER.options(SERVER) == []
    assert MachineSpec(64, "2x16x2", 2, tcg="multi").options(SERVER) == [
        "--tcg", "multi"]
    flat = MachineSpec(8).options(SERVER)
    assert flat == ["--cpus", "8", "--topology", "8x1x1", "--numa", "1"]
    assert machinespec.from_args(parsed("states", *flat)).make() == \
        MachineSpec(8).make()


def test_help_shows_the_defaults_and_the_choices(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "vCPUs (default: 64)" in text
    assert "2x8x2 (default: 2x16x2)" in text
    assert "{intel,amd}" in text and "{single,multi}" in text


def test_an_impossible_machine_is_a_usage_error_at_parse():
    with pytest.raises(UsageError, match="is 64 CPUs, not --cpus 8"):
        machinespec.from_args(parsed("compare", "--cpus", "8"))


def test_states_command_reruns_the_machine_split():
    assert states_report.command(SERVER, 1) == "tools/bringup states"
    spec = MachineSpec(32, "2x8x2", 2, x2apic=True)
    assert states_report.command(spec, 3) == (
        "tools/bringup states --cpus 32 --topology 2x8x2 --x2apic "
        "--reps 3")
    rec = states_report.results([], spec)
    assert rec["machine"] == spec.name


def test_of_a_machine_makes_it_again():
    mach = MachineSpec(20, "5x17x2", high=10).make()
    assert machinespec.of(mach).make() == mach
