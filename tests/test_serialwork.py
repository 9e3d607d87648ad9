"""serialwork: the plugin's trace parsed, cut into windows and phases,
the stability check and the tables, on a real trace (ours, 8 vCPUs
2x2x2, round-robin) and the System.map symbols it needs."""
import gzip
import statistics
from pathlib import Path
from typing import Dict, List, NoReturn

import pytest

from bringuplab.report import record, render, serialwork_tables as swt
from bringuplab.runs import serialwork as sw
from bringuplab.errors import InfraError

DATA = Path(__file__).resolve().parent / "serialwork"
TRACE = gzip.open(DATA / "ours-parallel-8.trace.gz", "rt").read()
SYSTEM_MAP = (DATA / "ours-parallel-8.System.map").read_text()


@pytest.fixture(scope="module")
def trace() -> sw.Trace:
    return sw.parse(TRACE)


@pytest.fixture(scope="module")
def work(trace: sw.Trace) -> sw.BootWork:
    return sw.analyse(trace, sw.Symbols(SYSTEM_MAP))


def test_parse_reads_the_whole_trace(trace: sw.Trace) -> None:
    assert trace.cpus == 8
    assert trace.done
    assert trace.roles == {"bringup_nonboot_cpus": "start",
                           "bringup_cpu": "window",
                           "native_smp_cpus_done": "end",
                           "notify_cpu_starting": "note"}
    # 1 start, 7 windows, 7 notes (one per AP), 1 end
    assert [e.name for e in trace.events].count("bringup_cpu") == 7
    assert len(trace.events) == 16
    # CPUs 0-7 and the unknown slot, three counters each
    assert all(len(e.counts) == 9 for e in trace.events)
    assert len(trace.blocks) > 10000


def test_parse_refuses_a_foreign_line() -> None:
    with pytest.raises(InfraError, match="line 2"):
        sw.parse("# serialwork 1 target x86_64 cpus 2\nX what\n")


def test_counters_only_grow(trace: sw.Trace) -> None:
    for before, after in zip(trace.events, trace.events[1:]):
        for old, new in zip(before.counts, after.counts):
            assert all(n >= o for o, n in zip(old, new))


def test_windows_follow_bringup_cpu(trace: sw.Trace) -> None:
    cut = sw.windows(trace)
    # ours starts the primary threads first
    assert [w.cpu for w in cut.windows] == [2, 4, 6, 1, 3, 5, 7]
    assert cut.first_pass > 0
    assert all(w.control > 0 and w.ap > 0 for w in cut.windows)


def test_each_ap_starts_on_its_own_cpu(trace: sw.Trace) -> None:
    """notify_cpu_starting(n) ran where the GS base is CPU n's."""
    assert sw.cpu_map_ok(trace) == []
    notes = [e for e in trace.events if e.name == "notify_cpu_starting"]
    assert sorted(e.cpu for e in notes) == list(range(1, 8))


def test_cpu_map_check_can_fail(trace: sw.Trace) -> None:
    note = next(e for e in trace.events if e.name == "notify_cpu_starting")
    bad = sw.Trace(trace.cpus, trace.roles,
                   [sw.Event(0, 3, note.name, 5, note.counts)], [], True)
    assert sw.cpu_map_ok(bad) == ["notify_cpu_starting(5) ran on CPU 3"]


def test_windows_need_the_end_marker(trace: sw.Trace) -> None:
    cut_short = sw.Trace(trace.cpus, trace.roles, trace.events[:-1],
                         trace.blocks, False)
    with pytest.raises(InfraError, match="no bringup"):
        sw.windows(cut_short)


def test_phases_match_the_markers_counters(work: sw.BootWork) -> None:
    """The profile and the counters agree: no problem reported."""
    assert work.problems == []
    assert work.aps == 7
    assert work.phases[swt.SERIAL] == sum(work.phases[p] for p in swt.PARTS)
    # the figures of this trace, per AP in k instructions
    per_ap = {p: round(work.phases[p] / 7 / 1e3, 1) for p in work.phases}
    assert per_ap[swt.SERIAL] == 97.2
    assert per_ap["control first pass"] == 45.2
    assert per_ap["AP in its window"] == 34.8


def test_profile_mismatch_is_a_problem(trace: sw.Trace) -> None:
    blocks = list(trace.blocks)
    first = next(i for i, b in enumerate(blocks)
                 if b.bucket == swt.B_AP and not b.pause)
    blk = blocks[first]
    blocks[first] = sw.Block(blk.bucket, blk.pc, blk.insns, blk.execs + 1,
                             blk.pause)
    changed = sw.Trace(trace.cpus, trace.roles, trace.events, blocks, True)
    problems = sw.analyse(changed, sw.Symbols(SYSTEM_MAP)).problems
    assert any(p.startswith("AP in its window: profile") for p in problems)


def test_apart_calls_and_functions(trace: sw.Trace,
                                   work: sw.BootWork) -> None:
    # the calls kept apart hold the time-bounded work
    assert work.phases["TSC warp test"] > 0
    assert work.phases["delay calibration"] > 0
    assert "check_tsc_warp" not in work.functions["AP in its window"]
    # a function kept apart alone moves out of the serialized work
    func = "set_cpu_sibling_map"
    own = work.functions["AP in its window"][func]
    alone = sw.analyse(trace, sw.Symbols(SYSTEM_MAP),
                       apart={"sibling map": (func,)})
    assert alone.phases["sibling map"] == own
    assert alone.phases[swt.SERIAL] == work.phases[swt.SERIAL] - own


def test_symbols_name_a_block() -> None:
    syms = sw.Symbols("ffffffff81000000 T a\nffffffff81000010 t b\n"
                      "ffffffff81000020 D data\n")
    assert syms.name(0xffffffff81000000) == "a"
    assert syms.name(0xffffffff8100001f) == "b"
    assert syms.name(0xffffffff81000030) == "b"     # data is no function
    assert syms.name(0x10) == "10"


def test_markers_and_plugin_arg() -> None:
    syms = sw.symbols(SYSTEM_MAP)
    names = [(n, r) for n, _, r in sw.markers(syms)]
    assert names == [("bringup_nonboot_cpus", "start"),
                     ("bringup_cpu", "window"),
                     ("native_smp_cpus_done", "end"),
                     ("notify_cpu_starting", "note")]
    # 6.12 has cpuhp_bringup_ap as the CPUHP_BRINGUP_CPU callback
    up = dict(syms)
    up["cpuhp_bringup_ap"] = up.pop("bringup_cpu")
    assert sw.markers(up)[1][0] == "cpuhp_bringup_ap"
    del up["cpuhp_bringup_ap"]
    with pytest.raises(InfraError, match="bringup_cpu/cpuhp_bringup_ap"):
        sw.markers(up)
    arg = sw.plugin_arg(Path("/x.so"), Path("/t"), 8, syms)
    assert arg.startswith("/x.so,out=/t,cpus=8,percpu=")
    assert f"apart=0:{syms['schedule']:x}:task" in arg
    # interrupts: every system vector and the external vectors' stubs
    assert f"apart=2:{syms['asm_sysvec_apic_timer_interrupt']:x}:cpu" in arg
    assert (f"apart=2:{syms['irq_entries_start']:x}-"
            f"{syms['spurious_entries_start']:x}:cpu") in arg


def test_versions() -> None:
    assert sw.upstream_version("1:10.0.2+ds-2+deb13u1~bpo12+1") == "10.0.2"
    assert sw.upstream_version("8.2.1-1") == "8.2.1"
    assert sw.api_version("#define QEMU_PLUGIN_VERSION 4\n") == 4
    assert sw.api_version("nothing") == 0
    assert sw.source_text("http://m/debian", "bookworm-backports", None) == (
        "Types: deb-src\nURIs: http://m/debian\nSuites: bookworm-backports\n"
        "Components: main\n")


def test_stability() -> None:
    assert swt.spread([100.0, 102.0, 104.0]) == pytest.approx(0.04 / 1.02)
    assert swt.stable([100.0, 102.0, 104.0])
    assert not swt.stable([100.0, 110.0, 104.0])
    assert not swt.stable([100.0])                  # one boot proves nothing
    assert swt.spread([]) is None


def _results(work: sw.BootWork, scale: Dict[str, List[float]]) -> dict:
    """A record's results: boots of `work` with every phase scaled per
    variant and rep."""
    samples = []
    for var, factors in scale.items():
        for rep, factor in enumerate(factors, 1):
            phases = {k: int(v * factor) for k, v in work.phases.items()}
            samples.append({"variant": var, "rep": rep, "verdict": "pass",
                            "aps": work.aps, "phases": phases,
                            "functions": work.functions,
                            "windows": work.windows, "problems": []})
    return {"machine": "8=2x2x2 numa2 single intel", "reps": 3,
            "variants": list(scale), "limit": 0.05,
            "calls": {k: [kind, list(f)] for k, (kind, f) in
                      sw.CALLS.items()},
            "apart": {}, "samples": samples}


def test_render_tables(work: sw.BootWork) -> None:
    results = _results(work, {"upstream-parallel": [2.0, 2.0, 2.02],
                              "v2-parallel": [1.5, 1.5, 1.5],
                              "ours-parallel": [1.0, 1.1, 1.0]})
    text = swt.render(results)
    rows = {tuple(line.split()[:2]): line for line in text.splitlines()
            if line.startswith(("ours-parallel", "upstream-parallel"))}
    # ours: 10% spread, not stable; upstream: 1%, stable
    assert rows[("ours-parallel", "serialized")].endswith("NO")
    assert rows[("upstream-parallel", "serialized")].endswith("yes")
    ratio = next(line for line in text.splitlines()
                 if line.startswith("ours-parallel") and "0.50" in line)
    assert "0.67" in ratio                         # 1.0 / 1.5 of v2
    assert "### ours-parallel: AP in its window, top functions" in text
    top = text.split("### ours-parallel: AP in its window")[1]
    first = top.split("```")[1].splitlines()[3].split()[0]
    ranked = max(work.functions["AP in its window"].items(),
                 key=lambda kv: kv[1])[0]
    assert first == ranked


def test_render_a_record(work: sw.BootWork) -> None:
    rec = record.Record("serialwork", True, _results(
        work, {"ours-parallel": [1.0, 1.0, 1.0]}))
    back = record.from_dict(rec.to_dict())
    text = render.markdown(back)
    assert text.startswith("# serialized work per AP: pass")
    assert "waits (schedule): schedule, __schedule (task)" in text


def test_per_ap_skips_failed_boots(work: sw.BootWork) -> None:
    results = _results(work, {"ours-parallel": [1.0, 1.0]})
    results["samples"].append({"variant": "ours-parallel", "rep": 3,
                               "verdict": "fail", "error": "no trace"})
    vals = swt.per_ap(results["samples"], "ours-parallel", swt.SERIAL)
    assert len(vals) == 2
    assert statistics.median(vals) == pytest.approx(
        work.phases[swt.SERIAL] / work.aps, abs=1)
    assert "ours-parallel rep 3: no trace" in swt.render(results)


def test_only_the_time_limit_ends_a_counted_boot(monkeypatch,
                                                 tmp_path: Path) -> None:
    """At 256 vCPUs 6.12 prints one node's CPUs of a pass as one console
    line, which under the plugin takes longer than the default silence
    limit: a serialwork boot must not be cut for silence."""
    from bringuplab.build import kernel
    from bringuplab.guest import boot
    from bringuplab.guest.machinespec import SERVER
    out = tmp_path / "out-scale-hz100"
    out.mkdir()
    (out / "System.map").write_text(SYSTEM_MAP)
    kern = kernel.built_in(out, "scale-hz100")
    monkeypatch.setattr(sw, "LOGS", tmp_path / "logs")
    monkeypatch.setattr(boot, "kernel_nr_cpus", lambda k: 8192)
    specs: List[boot.BootSpec] = []

    def fake_run(spec: boot.BootSpec, quiet: bool = False) -> NoReturn:
        specs.append(spec)
        raise _Booted()
    monkeypatch.setattr(boot, "run", fake_run)
    var = sw.pick("upstream-parallel")[0]
    with pytest.raises(_Booted):
        sw.boot_one(var, kern, SERVER, Path("initrd"), Path("serialwork.so"),
                    1)
    assert [s.silence for s in specs] == [0]
    assert specs[0].deadline() == 120 + 6 * SERVER.cpus


class _Booted(Exception):
    """Raised by the fake boot.run once it has the spec."""
