"""A/B comparison tables, on made-up samples; bad arms rejected."""
import pytest

from bringuplab.report import compare_tables
from bringuplab.runs import bench, compare
from bringuplab.errors import LabError


def sample(arm: str, rep: int, host: float, phases: dict,
           verdict: str = "pass") -> bench.Sample:
    return bench.Sample("64=2x16x2 numa2 single intel", 64, "single",
                        "intel", arm, rep, verdict, host, "parallel", "",
                        phases, host_wall_ms=host,
                        post_bringup_ms=host * 10)


def test_ratios_against_the_first_arm_by_median_and_per_rep():
    samples = [sample("default", 1, 100.0, {"kick": 1000}),
               sample("w1", 1, 150.0, {"kick": 3000}),
               sample("default", 2, 300.0, {"kick": 1000}),
               sample("w1", 2, 300.0, {"kick": 3000}),
               sample("default", 3, 200.0, {}),
               sample("w1", 3, 1.0, {}, "hang")]
    rows = compare_tables.ratio_rows(samples, ["default", "w1"])
    assert rows[0][1:] == ["200.0", "100.0-300.0", "3", "1.00",
                           "1.00 (1.00-1.00)", "2000.0 (1000.0-3000.0)"]
    # the hung boot counts as failed and drops out of its rep's pair
    assert rows[1][1:] == ["225.0", "150.0-300.0", "2 (1 failed)", "1.12",
                           "1.25 (1.00-1.50)", "2250.0 (1500.0-3000.0)"]
    text = compare_tables.render(samples, ["default", "w1"])
    assert "x default" in text.splitlines()[0]
    assert "kick" in text


def test_patch_numbers_are_checked():
    assert compare.patch_number("3", 29) == 3
    for bad in ("0", "30", "three"):
        with pytest.raises(LabError):
            compare.patch_number(bad, 29)


def test_arm_names():
    assert compare.arm_name("  ") == "default"
    assert compare.arm_name("cpuhp.parallel_window=1") == \
        "cpuhp.parallel_window=1"


def test_config_flavours_are_checked_before_a_build():
    assert compare.config_names(["hz100", "hz1000"]) == ["hz100", "hz1000"]
    for bad in (["guest"], ["nosmp"], ["huge"], ["hz100", "hz100"]):
        with pytest.raises(LabError):
            compare.config_names(bad)


def test_patches_left_out_together():
    assert compare.patch_numbers("12,11", 15) == (11, 12)
    assert compare.patch_numbers("9", 15) == (9,)
    assert compare.without_name((11, 12)) == "without-11+12"
    for bad in (",", "11,16", "11,x"):
        with pytest.raises(LabError):
            compare.patch_numbers(bad, 15)
