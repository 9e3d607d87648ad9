"""Derived figures: the floor and its ratios, from committed results and
made-up boots."""
from pathlib import Path

import pytest

from bringuplab.report import record, stats
from bringuplab.report.samples import Sample

BENCH = Path(__file__).resolve().parents[1] / "bench"
MACHINE = "64=2x16x2 numa2 single intel"


def samples_of(name: str):
    rec = record.load(BENCH / name)
    return [Sample(**row) for row in rec.results["samples"]]


def floor_of(floors, variant: str) -> stats.Floor:
    found = [f for f in floors if f.variant == variant and
             f.setup == MACHINE]
    assert len(found) == 1, floors
    return found[0]


def test_the_rr64_floor_is_computed_not_summed_by_hand():
    """The README's floor of the rr64 run (2026-12-02 18:07): 92.7 + 64.0
    + 53.9 + 65.8 + 14.6 = 291 ms, 0.36x our serial mode, 0.52x
    upstream's parallel mode; our parallel mode 1.37x of it."""
    floor = floor_of(stats.floors(samples_of(
        "rr64+ours-parallel+ours-serial+upstream-parallel.json")),
        "ours-parallel")
    assert [round(floor.parts_ms[p], 1) for p in stats.FLOOR_PHASES] == \
        [92.7, 64.0, 53.9, 65.8, 14.6]
    assert round(floor.total_ms) == 291
    assert round(floor.of_ours_serial, 2) == 0.36
    assert round(floor.of_upstream_parallel, 2) == 0.52
    assert round(floor.bringup_over_floor, 2) == 1.37
    assert floor.bringup_ms == pytest.approx(397.6, abs=0.05)


def test_the_make_bench_floor_of_17_52():
    """124.3 + 84.0 + 60.0 + 85.9 + 13.6 = 368 ms, 0.45x our serial
    mode, 0.30x upstream's parallel mode."""
    floor = floor_of(stats.floors(samples_of("quick.json")),
                     "ours-parallel")
    assert round(floor.total_ms) == 368
    assert round(floor.of_ours_serial, 2) == 0.45
    assert round(floor.of_upstream_parallel, 2) == 0.30


def boot(variant: str, rep: int, host: float, phases: dict,
         mode: str = "parallel", verdict: str = "pass") -> Sample:
    return Sample(MACHINE, 64, "single", "intel", variant, rep, verdict,
                  host, mode, "", dict(phases), host_wall_ms=host,
                  kick_total_us=int(host * 1000) - 10000)


PHASES = {"kick": 20000, "ap-setup": 30000, "online-states": 40000,
          "to-idle": 5000}


def test_floor_sums_the_five_phases_of_parallel_boots_only():
    samples = [boot("ours-parallel", 1, 200.0, PHASES),
               boot("ours-parallel", 2, 300.0, PHASES),
               boot("ours-serial", 1, 400.0, PHASES, "serial"),
               boot("ours-serial", 2, 600.0, PHASES, "serial"),
               boot("upstream-parallel", 1, 250.0, {}),
               boot("upstream-parallel", 2, 250.0, {})]
    floors = stats.floors(samples)
    assert [f.variant for f in floors] == ["ours-parallel"]
    floor = floors[0]
    # pre-kick 10 ms each (host less the time from the first kick)
    assert floor.parts_ms == {"pre-kick": 10.0, "kick": 20.0,
                              "ap-setup": 30.0, "online-states": 40.0,
                              "to-idle": 5.0}
    assert floor.total_ms == 105.0
    assert floor.of_ours_serial == 105.0 / 500.0
    assert floor.of_upstream_parallel == 105.0 / 250.0
    assert floor.bringup_over_floor == 250.0 / 105.0
    assert floor.to_dict()["total_ms"] == 105.0


def test_no_floor_without_every_phase_or_a_passing_boot():
    partial = dict(PHASES)
    del partial["to-idle"]
    assert stats.floors([boot("ours-parallel", 1, 200.0, partial)]) == []
    assert stats.floors([boot("ours-parallel", 1, 200.0, PHASES,
                              verdict="hang")]) == []


def test_floor_ratios_missing_when_the_other_variant_did_not_run():
    floor = stats.floors([boot("w1", 1, 200.0, PHASES)])[0]
    assert floor.of_ours_serial is None and \
        floor.of_upstream_parallel is None
    assert floor.bringup_over_floor == 200.0 / 105.0


def test_rep_ratios_pair_boots_of_one_rep():
    samples = [boot("a", 1, 100.0, {}), boot("b", 1, 200.0, {}),
               boot("a", 2, 300.0, {}), boot("b", 2, 300.0, {}),
               boot("a", 3, 50.0, {}, verdict="fail"),
               boot("b", 3, 100.0, {})]
    assert stats.rep_ratios(samples, MACHINE, "a", "b") == [0.5, 1.0]
    assert stats.median([]) is None and stats.median([3.0, 1.0]) == 2.0


def test_medians_take_the_host_busy_of_passing_boots():
    def boot(rep: int, verdict: str, wall: float, vcpu: float) -> Sample:
        return Sample(MACHINE, 64, "single", "intel", "ours-parallel", rep,
                      verdict, 100.0, "parallel", "x.log",
                      host_wall_ms=wall, host_vcpu_ms=vcpu)
    cell = stats.medians([boot(1, "pass", 100.0, 50.0),
                          boot(2, "pass", 100.0, 90.0),
                          boot(3, "pass", 100.0, 70.0),
                          boot(4, "fail", 100.0, 10.0)])[MACHINE][
                              "ours-parallel"]
    assert cell["busy"] == pytest.approx(
        Sample(MACHINE, 64, "single", "intel", "x", 0, "pass", 1.0, None,
               "", host_wall_ms=100.0, host_vcpu_ms=70.0).host_busy)
    assert cell["failed"] == 1 and cell["n"] == 3
