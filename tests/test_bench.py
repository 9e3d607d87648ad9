"""The benchmark's summaries, on made-up samples."""
import subprocess

from bringuplab.build import tree, variants
from bringuplab.report import bench_tables, stats
from bringuplab.runs import bench


def sample(variant: str, ms: float, phases: dict, verdict: str = "pass"
           ) -> bench.Sample:
    return bench.Sample("64=2x16x2 numa2 single intel", 64, "single",
                        "intel", variant, 1, verdict, ms, "parallel", "",
                        phases)


def test_medians_ignore_failed_boots():
    cells = stats.medians([sample("ours-parallel", 100.0, {}),
                           sample("ours-parallel", 300.0, {}),
                           sample("ours-parallel", 200.0, {}),
                           sample("ours-parallel", 1.0, {}, "hang")])
    cell = cells["64=2x16x2 numa2 single intel"]["ours-parallel"]
    assert cell["median"] == 200.0
    assert cell["failed"] == 1


def test_phase_table_takes_medians_per_phase():
    text = bench_tables.phase_table([
        sample("ours-parallel", 1.0, {"kick": 1000, "tsc-sync": 20000}),
        sample("ours-parallel", 1.0, {"kick": 3000, "tsc-sync": 40000}),
        sample("ours-parallel", 1.0, {"kick": 2000, "tsc-sync": 30000}),
        sample("upstream-parallel", 1.0, {})])
    lines = text.splitlines()
    assert lines[0].split() == ["machine", "kernel/mode", "kick", "tsc-sync"]
    assert lines[2].split()[-2:] == ["2.0", "30.0"]
    assert len(lines) == 3


def test_phase_table_empty_without_reports():
    assert bench_tables.phase_table(
        [sample("upstream-parallel", 1.0, {})]) == ""


def test_host_clock_table_uses_host_wall():
    def timed(variant: str, guest: float, host: float) -> bench.Sample:
        smp = sample(variant, guest, {})
        smp.host_wall_ms = host
        return smp
    cells = stats.medians([timed("ours-parallel", 50.0, 80.0),
                           timed("ours-serial", 100.0, 100.0)])
    guest = bench_tables.render(cells).splitlines()
    host = bench_tables.render(cells, "host").splitlines()
    # machine (4 words), kernel/mode, median, min-max, boots, x own serial
    assert guest[2].split()[8] == "0.50"
    assert host[2].split()[5:9] == ["80.0", "80.0-80.0", "1", "0.80"]
    assert "host busy" not in host[0]


def test_host_clock_table_skips_boots_without_host_times():
    cells = stats.medians([sample("ours-parallel", 50.0, {})])
    assert len(bench_tables.render(cells, "host").splitlines()) == 2


def test_pre_kick_is_host_wall_less_the_time_from_the_first_kick():
    smp = sample("ours-parallel", 300.0, {"kick": 50000})
    assert stats.pre_kick_us(smp) is None
    smp.host_wall_ms, smp.kick_total_us = 400.0, 250000
    assert stats.pre_kick_us(smp) == 150000.0
    lines = bench_tables.phase_table([smp]).splitlines()
    assert lines[0].split()[-2:] == [bench_tables.PRE_KICK, "kick"]
    assert lines[2].split()[-2:] == ["150.0", "50.0"]


def test_pair_table_divides_boots_of_the_same_rep():
    def timed(variant: str, rep: int, host: float,
              verdict: str = "pass") -> bench.Sample:
        smp = sample(variant, 1.0, {}, verdict)
        smp.rep, smp.host_wall_ms = rep, host
        return smp
    # rep 2 ran on a slow host: its pair keeps the same ratio
    text = bench_tables.pair_table([
        timed("ours-parallel", 1, 40.0), timed("ours-serial", 1, 100.0),
        timed("ours-parallel", 2, 160.0), timed("ours-serial", 2, 400.0),
        timed("ours-parallel", 3, 30.0), timed("ours-serial", 3, 60.0),
        timed("upstream-parallel", 3, 90.0, "hang")])
    lines = text.splitlines()
    assert lines[0].split() == ["machine", "ratio", "median", "min-max",
                                "pairs"]
    # a failed boot leaves its rep out of the ratios it is part of
    assert len(lines) == 3
    assert lines[2].split()[-3:] == ["0.40", "0.40-0.50", "3"]


def test_pick_variants_keeps_the_bench_order():
    picked = variants.pick_variants("upstream-parallel, ours-parallel")
    assert [var.name for var in picked] == ["ours-parallel",
                                            "upstream-parallel"]
    assert variants.pick_variants(None) == [
        var for var in variants.VARIANTS if not var.experiment]


def test_experiments_boot_only_when_named():
    assert "halt-parallel" not in [
        var.name for var in variants.pick_variants(None, "full")]
    assert [var.name for var in variants.pick_variants(
        "halt-parallel,ours-parallel", "targets")] == [
        "ours-parallel", "halt-parallel"]
    assert bench.HALT_PATCH.is_file()
    # the series the experiment was written on is still in this history
    subprocess.run(["git", "-C", str(bench.ROOT), "cat-file", "-e",
                    f"{bench.HALT_SERIES_REV}:patches"], check=True)


def test_command_names_a_subset_of_variants():
    assert bench.command("quick", 3) == "make bench"
    assert bench.command("quick", 3, variants.pick_variants(None)) == \
        "make bench"
    subset = variants.pick_variants("ours-parallel,ours-serial")
    assert bench.command("rr64", 7, subset) == (
        "tools/bringup bench --suite rr64 --reps 7 "
        "--variants ours-parallel,ours-serial")


V3 = "ours+calibration+workqueue-parallel"


def _rep(variant: str, rep: int, host_ms: float, cpus: int = 64,
         tcg: str = "single") -> bench.Sample:
    return bench.Sample(f"{cpus}=x {tcg}", cpus, tcg, "intel", variant, rep,
                        "pass", host_ms, "parallel", "", {}, host_ms)


def test_target_met_by_the_median_of_per_rep_ratios():
    # rep ratios 0.5, 0.9, 1.2: median 0.9 <= 1.0 although one rep is over
    rows = bench_tables.target_rows(
        [_rep(V3, 1, 50), _rep("upstream-parallel", 1, 100),
         _rep(V3, 2, 80), _rep("upstream-parallel", 2, 100),
         _rep(V3, 3, 120), _rep("upstream-parallel", 3, 100)])
    assert rows == [["64=x single", "v3 par / upstream par", "0.80",
                     "0.80", "3", "met"]]


def test_target_missed_above_the_limit():
    rows = bench_tables.target_rows(
        [_rep(V3, 1, 33, 32, "multi"),
         _rep("upstream-parallel", 1, 30, 32, "multi")])
    assert rows[0][1:] == ["v3 par / upstream par", "1.10", "1.00", "1",
                           "missed"]


def test_the_main_series_alone_is_not_judged_by_the_targets():
    # v3 is sent with its split-out series; the main series alone is
    # priced (PAIRS), not judged
    assert bench_tables.target_rows(
        [_rep("ours-parallel", 1, 50), _rep("upstream-parallel", 1, 100),
         _rep("ours-parallel", 1, 50, 32, "multi"),
         _rep("upstream-parallel", 1, 100, 32, "multi")]) == []


def test_target_applies_only_to_its_machine():
    # a round-robin 32-vCPU machine is neither target's
    assert bench_tables.target_rows([_rep(V3, 1, 33, 32),
                              _rep("upstream-parallel", 1, 30, 32)]) == []


def test_the_targets_suite_boots_its_own_variants_by_default():
    names = [var.name for var in variants.pick_variants(None, "targets")]
    assert names == ["ours-parallel", "upstream-parallel", "base-serial",
                     V3, "ours+calibration+workqueue-serial"]
    assert len(variants.pick_variants(None, "quick")) == len(
        [var for var in variants.VARIANTS if not var.experiment])
    assert not any("+" in var.kernel
                   for var in variants.pick_variants(None, "quick"))
    assert bench.command("targets", 5, variants.pick_variants(
        None, "targets")) == "tools/bringup bench --suite targets --reps 5"
    assert bench.command("targets", 5, variants.pick_variants(
        "ours-parallel", "targets")) == (
        "tools/bringup bench --suite targets --reps 5 "
        "--variants ours-parallel")


def test_every_pair_names_variants_the_bench_boots():
    names = {var.name for var in variants.VARIANTS}
    for _, num, den in bench_tables.PAIRS:
        assert {num, den} <= names


def test_the_extras_suite_prices_each_split_out_series():
    # Every split-out series patches/ holds, on the series and on the base
    extras = tree.extra_names()
    assert {"calibration", "workqueue", "scaling"} <= set(extras)
    kernels = {var.kernel for var in variants.pick_variants(None, "extras")}
    assert kernels == ({"ours", "base"} | {f"ours+{x}" for x in extras}
                       | {f"base+{x}" for x in extras})
    pairs = {name for name, _, _ in bench_tables.PAIRS}
    for which in extras:
        assert f"ours+{which} / ours" in pairs
        assert f"base+{which} / base" in pairs
