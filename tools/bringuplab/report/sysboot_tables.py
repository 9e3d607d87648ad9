"""The tables of a sysboot record (sysboot.py): medians per kernel, then
every boot. Nothing here boots."""
from statistics import median
from typing import List, Optional


def _median(values: List[Optional[float]]) -> str:
    got = [v for v in values if v is not None]
    return f"{median(got):.0f}" if got else "-"


def _per_rep(samples: List[dict], arm: str, first: str) -> str:
    """Median over the reps of the arm's multi-user time over the first
    arm's in the same rep (both passed)."""
    times = {(s["arm"], s["rep"]): s["multi_user_ms"] for s in samples
             if s["verdict"] == "pass" and s["multi_user_ms"]}
    ratios = [times[(arm, rep)] / times[(first, rep)]
              for rep in sorted({r for _, r in times})
              if (arm, rep) in times and (first, rep) in times]
    return f"{median(ratios):.2f}" if ratios else "-"


def markdown(results: dict) -> str:
    """Medians per arm of a sysboot record, then every boot."""
    mach = results["machine"]
    checks = results.get("checks") or ["cpus"]
    lines = [f"{mach['cpus']} vCPUs ({mach['topology']}), "
             f"{results['reps']} reps, arms in turn; host clock, ms; "
             f"checks: {', '.join(checks)}", "",
             "| kernel | boots passed | QEMU start to multi-user | "
             f"x {results['arms'][0]} (per rep) | "
             "bringup (host) | bringup (dmesg) |",
             "|---|---|---|---|---|---|"]
    for arm in results["arms"]:
        mine = [s for s in results["samples"] if s["arm"] == arm]
        passed = sum(s["verdict"] == "pass" for s in mine)
        lines.append(
            f"| {arm} | {passed}/{len(mine)} | "
            f"{_median([s['multi_user_ms'] for s in mine])} | "
            f"{_per_rep(results['samples'], arm, results['arms'][0])} | "
            f"{_median([s['bringup_host_ms'] for s in mine])} | "
            f"{_median([s['bringup_dmesg_ms'] for s in mine])} |")
    lines += ["", "(medians; each boot below)", ""]
    for arm, about_ in results.get("images", {}).items():
        pkgs = ", ".join(f"{p} {v}" for p, v in
                         about_.get("kernel_packages", {}).items())
        lines.append(f"- {arm}: `{about_.get('release', '?')}` ({pkgs})")
    lines += ["",
              "| kernel | rep | verdict | multi-user | bringup (host) | log |",
              "|---|---|---|---|---|---|"]
    for smp in results["samples"]:
        lines.append(f"| {smp['arm']} | {smp['rep']} | {smp['verdict']} | "
                     f"{smp['multi_user_ms']} | {smp['bringup_host_ms']} | "
                     f"`{smp['log']}` |")
    failed = [f"- {s['arm']} rep {s['rep']}: {'; '.join(s['reasons'])}"
              for s in results["samples"]
              if s["verdict"] != "pass" and s.get("reasons")]
    if failed:
        lines += ["", "Why boots failed:", ""] + failed
    return "\n".join(lines)
