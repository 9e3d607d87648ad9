"""The scale suite (`bench --suite scale`): its machines, kernels and
config, and its tables, slope and targets on made-up samples."""
import pytest

from bringuplab.build import kconfig, variants
from bringuplab.errors import UsageError
from bringuplab.report import render, scale_tables as st
from bringuplab.report.record import Record
from bringuplab.report.samples import Sample
from bringuplab.runs import bench

OURS, UP = st.OURS, st.UPSTREAM


def smp(variant: str, cpus: int, window_ms: float, rep: int = 1,
        verdict: str = "pass", init_ms: float = 9000.0) -> Sample:
    return Sample(f"{cpus}=2x{cpus // 4}x2 numa2 single intel", cpus,
                  "single", "intel", variant, rep, verdict, window_ms,
                  "parallel", "", {}, window_ms, window_ms, None, None,
                  init_ms)


def ladder(variant: str, per_ap_us: float, exponent: float = 0.0,
           sizes=(32, 64, 128, 256), rep: int = 1):
    """Boots whose cost per AP is per_ap_us * (N / 32) ** exponent."""
    return [smp(variant, n, per_ap_us * (n / 32) ** exponent * (n - 1)
                / 1000.0, rep) for n in sizes]


def test_the_suite_is_round_robin_intel_two_sockets_up_to_1024():
    specs = bench.SUITES["scale"]
    assert [s.cpus for s in specs] == [32, 64, 128, 256, 512, 1024]
    assert {(s.tcg, s.profile, s.numa) for s in specs} == {
        ("single", "intel", 2)}
    assert all(s.topology.startswith("2x") for s in specs)
    assert bench.SUITE_CONFIG["scale"] == "scale-hz100"
    # in the order of variants.VARIANTS
    assert [v.name for v in variants.default_variants("scale")] == [
        UP, "base-serial", OURS, "ours+calibration+workqueue+scaling-serial"]


def test_machines_above_255_apic_ids_get_x2apic_and_need_nr_cpus():
    big = bench.SUITES["scale"][-1]
    with pytest.raises(UsageError, match="NR_CPUS=512"):
        big.make(512)
    mach = big.make(8192)
    assert mach.x2apic and mach.memory() >= 4096
    assert not bench.SUITES["scale"][0].make(8192).x2apic


def test_the_scale_config_is_debians_cpu_limits():
    flav = kconfig.flavour("scale")
    assert flav.fragments == ("qemu-guest", "scale")
    opts = kconfig.parse(kconfig.fragment_path("scale").read_text())
    assert opts["CONFIG_MAXSMP"] == "y"
    assert int(opts["CONFIG_NR_CPUS"]) >= 1024


def test_the_scale_suite_ticks_at_100_hz_with_the_same_cpu_limits():
    flav = kconfig.flavour(bench.SUITE_CONFIG["scale"])
    assert flav.fragments == ("qemu-guest", "scale", "hz100")
    opts = kconfig.parse(kconfig.fragment_path("hz100").read_text())
    assert opts["CONFIG_HZ"] == "100"


def test_cost_per_ap_is_the_window_over_the_aps():
    [pnt] = st.points([smp(OURS, 65, 64.0), smp(OURS, 65, 128.0, rep=2),
                       smp(OURS, 65, 1.0, rep=3, verdict="hang")])
    assert pnt.window_ms == 96.0 and pnt.cost_us == 1500.0
    assert (pnt.boots, pnt.failed) == (2, 1)


@pytest.mark.parametrize("exponent", [0.0, 0.5, 1.0])
def test_the_slope_is_the_exponent_of_the_growth(exponent):
    fit = st.slope(st.points(ladder(OURS, 100.0, exponent)))
    assert fit == pytest.approx(exponent, abs=1e-9)


def test_no_slope_from_one_size():
    assert st.slope(st.points(ladder(OURS, 100.0, sizes=(64,)))) is None


def test_growth_target_holds_at_1_10_and_not_above():
    flat = ladder(OURS, 100.0, sizes=(32, 1024))
    at_limit = flat[:1] + [smp(OURS, 1024, 110.0 * 1023 / 1000.0)]
    above = flat[:1] + [smp(OURS, 1024, 111.0 * 1023 / 1000.0)]
    assert st.target_rows(at_limit)[0][-1] == "met"
    assert st.target_rows(above)[0][-1] == "missed"
    assert st.target_rows(above)[0][0] == "cost per AP at 1024 / at 32"


def test_upstream_target_per_size_from_per_rep_ratios():
    boots = (ladder(OURS, 80.0, sizes=(32, 64)) + ladder(UP, 100.0,
                                                         sizes=(32, 64)))
    boots.append(smp(OURS, 128, 81.0))
    boots.append(smp(UP, 128, 100.0))
    rows = {r[0]: r for r in st.target_rows(boots)}
    assert rows["32 vCPUs: ours par / upstream par"][1:] == [
        "0.80", "0.80", "met"]
    assert rows["128 vCPUs: ours par / upstream par"][-1] == "missed"


def test_claims_judge_the_newest_v3_a_record_holds():
    old = st.OURS_CHOICES[1]
    # an older record: v3 without the scaling series is what it judges
    boots = ladder(old, 70.0, sizes=(32, 64)) + ladder(UP, 100.0,
                                                       sizes=(32, 64))
    assert st.ours_variant(boots) == old
    assert st.target_rows(boots)[0][1] == "1.00"
    # both held: the one with the scaling series, not the other
    boots += ladder(OURS, 90.0, exponent=1.0, sizes=(32, 64))
    assert st.ours_variant(boots) == OURS
    assert st.target_rows(boots)[0][1] == "2.00"


def test_the_table_shows_growth_from_the_smallest_size():
    text = st.table(ladder(OURS, 100.0, 1.0) + ladder(UP, 200.0))
    lines = [ln.split() for ln in text.splitlines()[2:]]
    ours = [ln for ln in lines if ln[0] == OURS]
    assert [ln[1] for ln in ours] == ["32", "64", "128", "256"]
    assert [ln[5] for ln in ours] == ["1.00", "2.00", "4.00", "8.00"]
    assert ours[0][6] == "0.50"          # 100 vs 200 us per AP at 32
    assert ours[0][7] == "9.0"           # PID 1 after 9 s


def test_a_scale_record_renders_its_section_and_others_do_not():
    boots = ladder(OURS, 100.0) + ladder(UP, 150.0)
    results = {"suite": "scale", "samples": [vars(b) for b in boots]}
    text = render.markdown(Record("bench", True, results))
    assert "## Cost per AP against the machine's size" in text
    assert "## The scale targets" in text
    results["suite"] = "rr64"
    assert "Cost per AP" not in render.markdown(
        Record("bench", True, results))


def fake_result(verdict: str = "pass"):
    from types import SimpleNamespace
    return SimpleNamespace(verdict=verdict, bringup_ms=100.0,
                           mode="parallel", log=f"build/logs/{verdict}.log",
                           phases_us={}, host_wall_ms=100.0,
                           host_vcpu_ms=100.0, kick_total_us=None,
                           post_bringup_ms=None, host_milestone_ms=5000.0,
                           reasons=[])


@pytest.fixture
def lab(monkeypatch, tmp_path):
    """Scale boots answered by answer(spec) in turn; nothing built."""
    from pathlib import Path
    from bringuplab.build import kernel, tree
    from bringuplab.guest import boot, initramfs
    from bringuplab.report import record
    monkeypatch.setattr(record, "RESULTS", tmp_path)
    monkeypatch.setattr(tree, "create", lambda: "tree up to date")
    monkeypatch.setattr(bench, "_build",
                        lambda which, config: kernel.of_image(Path(which)))
    monkeypatch.setattr(boot, "kernel_nr_cpus", lambda kern: 8192)
    monkeypatch.setattr(initramfs, "build", lambda: Path("initrd"))
    monkeypatch.setattr(bench, "plot", lambda samples, cells, png: None)
    monkeypatch.setattr(st, "plot", lambda samples, png: None)
    booted = []

    def answer(spec):
        return fake_result()
    state = {"answer": answer}

    def fake_boot(spec, quiet=False):
        booted.append((spec.mach.cpus, spec.timeout))
        assert spec.silence == 0
        return state["answer"](spec)
    monkeypatch.setattr(boot, "run", fake_boot)
    return state, booted, tmp_path


TWO = "ours+calibration+workqueue-parallel,base-serial"


def test_scale_boots_get_20_minutes_and_a_hang_ends_the_ladder(lab,
                                                               capsys):
    state, booted, _ = lab
    state["answer"] = lambda spec: fake_result(
        "hang" if spec.mach.cpus == 256 else "pass")
    rec = bench.run("scale", 2, variants.pick_variants(TWO, "scale"))
    sizes = [cpus for cpus, _ in booted]
    # rep 1 up to the first hang at 256 and that size's other kernel,
    # rep 2 below it
    assert sizes == [32, 32, 64, 64, 128, 128, 256, 256, 32, 32, 64, 64,
                     128, 128]
    assert {timeout for _, timeout in booted} == {1200.0}
    # the progress count ends where the boots do
    assert "[14/14] bench: " in capsys.readouterr().err
    assert rec.results["ladder_stop"]["cpus"] == 256
    assert rec.results["complete"] is True
    assert rec.ok          # the sizes below the stop all passed
    text = render.markdown(rec)
    assert "**The ladder stops at 256 vCPUs**" in text
    assert "within 20 min" in text and "Incomplete" not in text


def test_a_failure_below_the_stop_fails_the_run(lab):
    state, _, _ = lab
    state["answer"] = lambda spec: fake_result(
        "fail" if spec.mach.cpus == 32 else
        "hang" if spec.mach.cpus == 64 else "pass")
    rec = bench.run("scale", 1, variants.pick_variants(TWO, "scale"))
    assert not rec.ok


def test_some_rungs_of_the_ladder_boot_alone_and_say_so(lab, capsys):
    """`--cpus 32,128`: those sizes only, every rep, and the record's
    command reruns the same."""
    _, booted, _ = lab
    rec = bench.run("scale", 2, variants.pick_variants(TWO, "scale"),
                    sizes=[32, 128])
    assert [cpus for cpus, _ in booted] == [32, 32, 128, 128] * 2
    assert "[8/8] bench: " in capsys.readouterr().err
    assert rec.results["sizes"] == [32, 128]
    assert rec.results["command"] == (
        "tools/bringup bench --suite scale --reps 2 --cpus 32,128 "
        "--variants base-serial,ours+calibration+workqueue-parallel")


def test_a_size_the_suite_lacks_is_a_usage_error():
    with pytest.raises(UsageError, match=r"no machine of 48 vCPUs \(its "
                       r"sizes: 32, 64, 128, 256, 512, 1024\)"):
        bench.suite_machines("scale", [32, 48])
    assert bench.suite_machines("rr64", None) == bench.SUITES["rr64"]


def test_the_cpus_option_takes_a_comma_list(capsys):
    from bringuplab import cli
    assert cli.cpu_counts("64,32,64") == [32, 64]
    assert cli.main(["bench", "--suite", "scale", "--cpus", "32,x"]) == 2
    assert "invalid vCPU count list value: '32,x'" in capsys.readouterr().err
    assert cli.main(["bench", "--suite", "scale", "--cpus", "48"]) == 2
    assert capsys.readouterr().err == (
        "bringup: error: bench: suite 'scale' has no machine of 48 vCPUs "
        "(its sizes: 32, 64, 128, 256, 512, 1024)\n")


def test_only_a_suite_with_a_limit_has_a_ladder():
    assert bench.stops_at("scale", "hang")
    assert not bench.stops_at("scale", "fail")
    assert not bench.stops_at("rr64", "hang")


def test_a_run_cut_short_leaves_its_record_marked_incomplete(lab):
    import json
    state, booted, results = lab

    def cut(spec):
        if len(booted) > 3:
            raise KeyboardInterrupt
        return fake_result()
    state["answer"] = cut
    with pytest.raises(KeyboardInterrupt):
        bench.run("scale", 1, variants.pick_variants(TWO, "scale"))
    kept = list(results.glob("bench-*.json"))
    assert len(kept) == 1
    data = json.loads(kept[0].read_text())
    assert data["results"]["complete"] is False
    assert len(data["results"]["samples"]) == 3 and not data["ok"]
    assert "**Incomplete**: the run stopped" in render.markdown(
        Record("bench", False, data["results"]))


def test_render_of_a_scale_record_writes_its_plot(tmp_path, monkeypatch,
                                                 capsys):
    import json
    from bringuplab import cli
    from bringuplab.report.record import Record as Rec
    boots = ladder(OURS, 100.0) + ladder(UP, 150.0)
    path = tmp_path / "bench-x.json"
    path.write_text(json.dumps(Rec("bench", True, {
        "suite": "scale", "samples": [vars(b) for b in boots]}).to_dict()))
    drawn = []
    monkeypatch.setattr(st, "plot", lambda samples, png: drawn.append(
        (len(samples), png)) or png)
    assert cli.main(["render", str(path)]) == 0
    assert drawn == [(8, tmp_path / "bench-x-scale.png")]
    assert "render: plot" in capsys.readouterr().err
    # other bench records draw nothing
    path.write_text(json.dumps(Rec("bench", True, {
        "suite": "rr64", "samples": [vars(b) for b in boots]}).to_dict()))
    assert cli.main(["render", str(path)]) == 0
    assert len(drawn) == 1
