"""The tables of a sysboot record (sysboot.py): medians per kernel, then
every boot. Nothing here boots."""
from statistics import median
from typing import List, Optional


def _median(values: List[Optional[float]]) -> str:
    got = [v for v in values if v is not None]
    return f"{median(got):.0f}" if got else "-"


def markdown(results: dict) -> str:
    """Medians per arm of a sysboot record, then every boot."""
    mach = results["machine"]
    lines = [f"{mach['cpus']} vCPUs ({mach['topology']}), "
             f"{results['reps']} reps, arms in turn; host clock, ms", "",
             "| kernel | boots passed | QEMU start to multi-user | "
             "bringup (host) | bringup (dmesg) |", "|---|---|---|---|---|"]
    for arm in results["arms"]:
        mine = [s for s in results["samples"] if s["arm"] == arm]
        passed = sum(s["verdict"] == "pass" for s in mine)
        lines.append(
            f"| {arm} | {passed}/{len(mine)} | "
            f"{_median([s['multi_user_ms'] for s in mine])} | "
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
    return "\n".join(lines)
