"""`bringup growth`: two serialwork records of two sizes side by side,
on a real record and copies of it with made-up growth."""
import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bringuplab.errors import UsageError
from bringuplab.report import growth_tables as gt

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "records" / "serialwork-20261206T163450Z.json"
VAR = "ours+calibration+workqueue-parallel"


def real() -> dict:
    return json.loads(REAL.read_text())["results"]


def larger(results: dict, cpus: int, scale=None) -> dict:
    """The record as if booted on `cpus` vCPUs with every boot's totals
    scaled to the new AP count, and the named functions of `scale`
    (phase, function) costing that many times more per AP."""
    out = copy.deepcopy(results)
    out["cpus"], out["machine"] = cpus, f"{cpus}=made-up"
    for smp in out["samples"]:
        old, new = smp["aps"], cpus - 1
        smp["aps"] = new
        for phase, funcs in smp.get("functions", {}).items():
            for func in funcs:
                factor = (scale or {}).get((phase, func), 1.0)
                funcs[func] = funcs[func] * new / old * factor
            smp["phases"][phase] = sum(funcs.values())
        for phase in smp.get("phases", {}):
            if phase not in smp.get("functions", {}):
                smp["phases"][phase] *= new / old
    return out


def test_flat_work_names_nothing():
    small = real()
    big = larger(small, 256)
    assert all(not g.grows() for g in gt.phase_growth(small, big))
    assert gt.function_growth(small, big) == []
    assert "No function grows more than 1.5x." in gt.render(small, big)


def test_a_function_that_grows_is_named_with_its_phase():
    small = real()
    big = larger(small, 256, {("AP in its window",
                               "set_cpu_sibling_map"): 4.0})
    named = [(g.variant, g.phase, g.function)
             for g in gt.function_growth(small, big)]
    assert (VAR, "AP in its window", "set_cpu_sibling_map") in named
    assert all(f == "set_cpu_sibling_map" for _, _, f in named)
    grow = [g for g in gt.function_growth(small, big) if g.variant == VAR]
    assert grow[0].ratio_text() == "4.00"
    text = gt.render(small, big)
    assert "## Functions that grow" in text and "set_cpu_sibling_map" in text


def test_growth_at_the_limit_is_flat_and_just_above_it_grows():
    small = real()
    func = ("AP in its window", "set_cpu_sibling_map")
    assert gt.function_growth(small, larger(small, 256, {func: 1.5})) == []
    assert gt.function_growth(small, larger(small, 256, {func: 1.6}))


def test_a_phase_that_grows_is_marked():
    small = real()
    big = larger(small, 256, {("AP in its window", f): 3.0 for f in
                              real()["samples"][0]["functions"]
                              ["AP in its window"]})
    marks = {(g.variant, g.phase): g.grows()
             for g in gt.phase_growth(small, big)}
    assert marks[(VAR, "AP in its window")]
    assert not marks[(VAR, "control first pass")]


def test_a_function_the_small_machine_folded_has_a_lower_bound():
    small = real()
    big = larger(small, 256)
    for smp in big["samples"]:
        smp["functions"]["AP in its window"]["brand_new_scan"] = \
            5000.0 * smp["aps"]
    grow = [g for g in gt.function_growth(small, big)
            if g.function == "brand_new_scan" and g.variant == VAR]
    assert grow and grow[0].bound
    assert grow[0].ratio_text().startswith(">=")


def test_a_cheap_function_is_not_named_however_it_grows():
    small = real()
    big = larger(small, 256)
    for smp in big["samples"]:
        smp["functions"]["AP in its window"]["tiny"] = 100.0 * smp["aps"]
    assert gt.function_growth(small, big) == []


def test_the_records_must_be_two_sizes_small_first():
    small = real()
    with pytest.raises(UsageError, match="the smaller machine"):
        gt.check(small, small)
    with pytest.raises(UsageError, match="the smaller machine"):
        gt.check(larger(small, 256), small)
    other = larger(small, 256)
    other["variants"] = ["nothing-in-common"]
    with pytest.raises(UsageError, match="share no kernel"):
        gt.check(small, other)


def test_the_records_must_hold_kernels_of_one_config():
    small = real()
    assert "config" not in small        # an older record: the guest config
    big = larger(small, 256)
    big["config"] = "scale-hz100"
    with pytest.raises(UsageError, match="different configs"):
        gt.check(small, big)
    small = dict(small, config="scale-hz100")
    assert gt.check(small, big) == list(small["variants"])


def test_the_cli_refuses_a_record_of_another_kind(tmp_path):
    bench = sorted((ROOT / "records").glob("bench-*.json"))[-1]
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "bringup"),
                           "growth", str(bench), str(REAL)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "is a bench record, not serialwork" in proc.stderr
