"""The table of a deb record (deb.py): the packages built and what from.
Nothing here builds."""
from pathlib import Path

from bringuplab import progress


def markdown(results: dict) -> str:
    """The packages of a deb record and what they were built from."""
    lines = [f"`linux-image-{results['release']}` "
             f"({results['pkgversion']}), Debian config "
             f"{results['debian_config']}, base "
             f"{results['base']['package']} {results['base']['version']}"
             f" + {results['series']['patches']} patches (tree "
             f"{results['series']['head'][:12]}), built in "
             f"{progress.duration(results['build_s'])} with -j"
             f"{results['jobs']}", "",
             "| package | bytes | sha256 |", "|---|---|---|"]
    for pkg in results["packages"]:
        lines.append(f"| `{Path(pkg['path']).name}` | {pkg['bytes']} | "
                     f"`{pkg['sha256']}` |")
    return "\n".join(lines)
