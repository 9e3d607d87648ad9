"""Markdown of every kind of record (record.py): what `bringup render
FILE` prints, and what bench, compare, soak and states print at their
end. Every figure comes from the record's boots through stats.py."""
import calendar
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

from bringuplab.report import bench_tables, columns, compare_tables, \
    deb_tables, demo_tables, record, scale_tables, serialwork_tables, \
    states_tables, stats, sysboot_tables
from bringuplab.errors import UsageError
from bringuplab.report.samples import Sample


def _fence(text: str) -> str:
    return f"```\n{text}\n```"


def _seconds(stamp: str) -> Optional[float]:
    try:
        return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))
    except (TypeError, ValueError):
        return None


def took(prov: record.Provenance) -> str:
    start, end = _seconds(prov.started), _seconds(prov.ended)
    if start is None or end is None:
        return ""
    return f" ({(end - start) / 60:.0f} min)"


def same_code(rev: str) -> str:
    """Whether the series measured at `rev` is the code patches/ holds
    now (only changelogs, subjects or the cover letter changed since):
    figures quoted in the changelogs hold for it only then."""
    then = record.series_code(rev) if rev != record.UNKNOWN \
        else record.UNKNOWN
    now = record.series_code()
    if record.UNKNOWN in (then, now):
        return ""
    return (f" (series code {then}: the code of patches/ now)"
            if then == now else
            f" (series code {then}; patches/ now holds {now})")


def provenance(rec: record.Record) -> str:
    """Where, when and from what the results came, as a list."""
    prov = rec.provenance
    command = rec.results.get("command")
    if prov is None:
        lines = ["- provenance: not recorded (a result file from before "
                 "records: no host, versions or revisions)"]
        if rec.results.get("date"):
            lines.append(f"- date: {rec.results['date']}")
        if command:
            lines.insert(0, f"- command: `{command}`")
        return "\n".join(lines)
    argv = " ".join(prov.argv)
    lines = [f"- command: `{command}` (run as `{argv}`)" if command
             and command != argv else f"- command: `{argv}`",
             f"- started {prov.started}, ended {prov.ended}{took(prov)}",
             f"- host: {prov.host.describe()}",
             f"- QEMU: {prov.qemu}; compiler: {prov.compiler}",
             f"- lab {prov.lab_revision[:12]}"
             + (" with uncommitted changes" if prov.lab_dirty else "")
             + f", patches/ of {prov.patches_revision[:12]}"
             + (" with uncommitted changes" if prov.patches_dirty
                else same_code(prov.patches_revision))]
    if prov.configs:
        lines.append("- kernel configs (sha256 of .config): " + ", ".join(
            f"{name} {digest[:16]}" for name, digest in prov.configs.items()))
    return "\n".join(lines)


def samples_of(results: dict) -> List[Sample]:
    try:
        return [Sample(**row) for row in results["samples"]]
    except (KeyError, TypeError) as err:
        raise UsageError(f"the record's samples are not boots ({err})") \
            from None


def floor_table(floors: List[stats.Floor]) -> str:
    rows = [[f.setup, f.variant]
            + [columns.fmt_ms(f.parts_ms[p]) for p in stats.FLOOR_PHASES]
            + [columns.fmt_ms(f.total_ms), _ratio(f.of_ours_serial),
               _ratio(f.of_upstream_parallel),
               _ratio(f.bringup_over_floor)]
            for f in floors]
    return columns.table(["machine", "kernel/mode", *stats.FLOOR_PHASES,
                         "floor ms", "floor / ours serial",
                         "floor / upstream par", "bringup / floor"], rows)


def _ratio(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


FLOOR_NOTE = (
    "The floor under round-robin TCG (stats.FLOOR_PHASES): one host "
    "thread emulates every vCPU, so a bringup cannot be shorter than the "
    "work done one AP at a time in either mode and either kernel: the "
    "PREPARE states of all APs (`pre-kick`), the kicks (which there hold "
    "each AP's startup), each AP's setup after its release (`ap-setup`), "
    "its ONLINE states (`online-states`) and the wait for its idle task "
    "(`to-idle`); medians of the kernel/mode's boots, set against the "
    "host-clock medians of the same run. Parallel bringups only: in a "
    "serial one `pre-kick` is CPU 1's PREPARE states alone.")


def _floor_section(samples: List[Sample]) -> str:
    floors = stats.floors(samples)
    if not floors:
        return ""
    return f"\n\n## The floor\n\n{FLOOR_NOTE}\n\n" + _fence(
        floor_table(floors))


def _cut_short(results: dict, boots: int) -> str:
    """What a bench record that is not the whole of its suite says first:
    a run still going or cut short, a ladder that stopped."""
    text = ""
    if results.get("complete") is False:
        text += (f"**Incomplete**: the run stopped (or is still going) "
                 f"after {boots} boots; the tables hold those.\n\n")
    stop = results.get("ladder_stop")
    if stop:
        text += (f"**The ladder stops at {stop['cpus']} vCPUs**: "
                 f"{stop['variant']} (rep {stop['rep']}) did not boot "
                 f"within {stop['limit_s'] / 60:.0f} min (log "
                 f"`{stop['log']}`); no larger size booted after "
                 f"it, and the verdict is that of the smaller sizes.\n\n")
    return text


def bench_md(results: dict) -> str:
    samples = samples_of(results)
    cells = stats.medians(samples)
    text = _cut_short(results, len(samples))
    text += (scale_tables.section(samples) + "\n\n"
             if results.get("suite") == "scale" else "")
    text += (f"## By the host's clock\n\n{bench_tables.HOST_CLOCK_NOTE}\n\n"
             + _fence(bench_tables.render(cells, "host"))
             + f"\n\n## By the guest's printk clock\n\n"
             f"{bench_tables.GUEST_CLOCK_NOTE}\n\n"
             + _fence(bench_tables.render(cells))
             + "\n\n`host busy`: host CPUs kept busy by QEMU's vCPU threads "
             "from the guest's first to its last bringup line, median "
             "(round-robin TCG: at most 1.00; below that, every vCPU was "
             "idle, waiting, part of the time).")
    pairs = bench_tables.pair_table(samples)
    if pairs:
        text += ("\n\n## Ratios within each rep\n\n"
                 f"{bench_tables.PAIR_NOTE}\n\n" + _fence(pairs))
    targets = bench_tables.target_table(samples)
    if targets:
        text += ("\n\n## The series' targets\n\nPer-rep ratios by the "
                 "host's clock (bench_tables.TARGETS), their median "
                 "against the limit:\n\n" + _fence(targets))
    phase = bench_tables.phase_table(samples)
    if phase:
        text += ("\n\n## Where the bringup time goes\n\nMedians of the "
                 "`bringup_timing` report of the kernels that have one "
                 "(the first version of the series), ms; control-CPU phases "
                 "are wall time from the first kick, `ap-*` are summed "
                 f"over the APs; `{stats.PRE_KICK}` is the bringup by the "
                 "host's clock less the report's time from the first "
                 "kick: the PREPARE states of all CPUs in parallel mode, "
                 "of CPU 1 in serial mode.\n\n" + _fence(phase))
    return text + _floor_section(samples)


def compare_md(results: dict) -> str:
    samples = samples_of(results)
    names = list(results.get("arms") or
                 dict.fromkeys(s.variant for s in samples))
    if not names:
        raise UsageError("the compare record has no arms")
    reps = results.get("reps") or max((s.rep for s in samples), default=0)
    return (f"{results.get('machine', '?')}, {reps} boots each, "
            "interleaved, by the host's clock:\n\n"
            + _fence(compare_tables.render(samples, names))
            + _floor_section(samples))


def states_md(results: dict) -> str:
    try:
        boots = [states_tables.Boot(**b) for b in results["boots"]]
    except (KeyError, TypeError) as err:
        raise UsageError(f"the states record's boots are not boots "
                         f"({err})") from None
    head = f"{results['machine']}:\n\n" if results.get("machine") else ""
    return head + _fence(states_tables.render(boots))


BOOT_HEAD = ["boot", "tcg", "apic", "verdict", "mode", "cpus",
             "bringup ms", "why"]


def soak_md(results: dict) -> str:
    sums = results.get("scenarios", [])
    # "infra": boots QEMU would not start, where the judge counts them
    counts = ["tried", "passed", "failed", "hung"] + (
        ["infra"] if any("infra" in s for s in sums) else [])
    summary = columns.table(
        ["scenario", "boots", *counts[1:]],
        [[s["scenario"], *(s.get(c, 0) for c in counts)] for s in sums])
    text = (f"{results.get('jobs', 1)} boots at a time, "
            f"{results.get('minutes', 0):.0f} min, series of "
            f"{results.get('series', '?')} patches:\n\n" + _fence(
                f"{summary}\n{results.get('passed', 0)} passed, "
                f"{results.get('failed', 0)} failed{_infra(results)}"))
    if results.get("not_run"):
        text += (f"\n\nCut off: {results['not_run']} boots not run "
                 "(`tools/bringup soak --resume RECORD` goes on).")
    if results.get("resumed_from"):
        text += (f"\n\nGoes on from {results['resumed_from']}, whose "
                 "boots it keeps.")
    tables = []
    for scen in [s["scenario"] for s in sums]:
        rows = [[b["name"], b["tcg"], b["apic"], b["verdict"],
                 b["mode"] or "-", b["cpus"],
                 columns.fmt_ms(b["bringup_ms"]), b["why"][:70]]
                for b in results.get("boots", []) if b["scenario"] == scen]
        tables.append(f"{scen}:\n{columns.table(BOOT_HEAD, rows)}")
    if tables:
        text += "\n\nEvery boot:\n\n" + _fence("\n\n".join(tables))
    return text


def _infra(results: dict) -> str:
    """What a run's summary line adds for its infrastructure errors
    (records since they are counted apart), else nothing."""
    infra = results.get("infra", 0)
    return f", {infra} not done (infrastructure)" if infra else ""


def check_md(results: dict) -> str:
    rows = [["PASS" if s["ok"] else "INFRA" if s.get("infra") else "FAIL",
             s["name"], s["detail"][:100]]
            for s in results.get("steps", [])]
    text = _fence(columns.table(["result", "step", "detail"], rows))
    text += (f"\n\n{results.get('passed', 0)} passed, "
             f"{results.get('failed', 0)} failed{_infra(results)}")
    if results.get("failures"):
        text += "\n\nfailed: " + ", ".join(results["failures"])
    return text


def buildtest_md(results: dict) -> str:
    """A buildtest record: each target built from base and series."""
    rows = [[t.get("name", "?"), "PASS" if t.get("ok") else "FAIL",
             str(len(t.get("new_warnings") or [])),
             "; ".join(t.get("problems") or [])[:70] or "-",
             f"{float(t.get('seconds') or 0):.0f}"]
            for t in results.get("targets", [])]
    text = _fence(columns.table(["target", "result", "new warnings",
                                "problems", "s"], rows)
                  + f"\n{results.get('passed', 0)} passed, "
                  f"{results.get('failed', 0)} failed")
    for target in results.get("targets", []):
        for warning in target.get("new_warnings") or []:
            text += f"\n\n{target.get('name')}: `{warning.get('shown')}`"
    if results.get("not_built"):
        text += ("\n\nCut off: not built " + ", ".join(
            results["not_built"]) + " (`tools/bringup buildtest --resume "
            "RECORD` goes on).")
    return text


def matrix_md(results: dict) -> str:
    """A matrix record: every boot of one named matrix."""
    rows = [[b["name"], b["tcg"], b["apic"], b["verdict"], b["mode"] or "-",
             b["cpus"], columns.fmt_ms(b["bringup_ms"]), b["why"][:70]]
            for b in results.get("boots", [])]
    return _fence(columns.table(BOOT_HEAD, rows) + (
        f"\n{results.get('passed', 0)} passed, "
        f"{results.get('failed', 0)} failed{_infra(results)}"))


BODIES: Dict[str, Callable[[dict], str]] = {
    "bench": bench_md, "compare": compare_md, "check": check_md,
    "soak": soak_md, "states": states_md,
    "serialwork": serialwork_tables.render,
    "deb": deb_tables.markdown, "sysboot": sysboot_tables.markdown,
    "buildtest": buildtest_md, "matrix": matrix_md,
    "demo": lambda results: _fence(
        demo_tables.table(results.get("boots", [])))}


def title(rec: record.Record) -> str:
    what = {"bench": "benchmark", "compare": "A/B comparison",
            "check": "make check", "soak": "soak",
            "states": "bringup by hotplug state",
            "serialwork": "serialized work per AP",
            "deb": "Debian kernel package",
            "sysboot": "Debian 12 boot time, Debian's kernel and ours",
            "buildtest": "base and series built for many configs",
            "matrix": f"matrix {rec.results.get('matrix', '')}",
            "demo": "make demo"
            }[rec.kind]
    state = "pass" if rec.ok else "FAIL"
    return f"# {what}: {state}"


def derived(rec: record.Record) -> Dict[str, object]:
    """The figures stats.py derives from a bench or compare record's
    boots (for `render --json`, older files included): medians, the
    ratios within each rep, the floors. Empty for other kinds."""
    if rec.kind not in ("bench", "compare"):
        return {}
    samples = samples_of(rec.results)
    if rec.kind == "bench":
        pairs = [(name, num, den) for name, num, den in bench_tables.PAIRS]
    else:
        names = list(rec.results.get("arms") or
                     dict.fromkeys(s.variant for s in samples))
        pairs = [(f"{name} / {names[0]}", name, names[0])
                 for name in names[1:]]
    ratios = [{"machine": setup, "ratio": name,
               "per_rep": stats.rep_ratios(samples, setup, num, den)}
              for setup in dict.fromkeys(s.setup for s in samples)
              for name, num, den in pairs]
    return {"medians": stats.medians(samples),
            "rep_ratios": [r for r in ratios if r["per_rep"]],
            "floors": [f.to_dict() for f in stats.floors(samples)]}


def markdown(rec: record.Record) -> str:
    return (f"{title(rec)}\n\n{provenance(rec)}\n\n"
            f"{BODIES[rec.kind](rec.results)}\n")


def render_file(path: Path) -> str:
    return markdown(record.load(path))
