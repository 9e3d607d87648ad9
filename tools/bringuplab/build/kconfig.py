"""Kernel configs: tinyconfig (or one of Debian's) + fragments, verified
after the merge."""
import lzma
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Tuple

from bringuplab.host import packages
from bringuplab.errors import InfraError, UsageError
from bringuplab.paths import DEBIAN_CONFIGS, KCONFIG, OVERLAY
from bringuplab.run import run

_SET = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")


@dataclass(frozen=True)
class Flavour:
    """A named config: fragments merged in order, and which to verify."""
    fragments: Tuple[str, ...]
    verify: Tuple[str, ...]
    # The config the fragments go onto: tinyconfig, or the name of one of
    # Debian's in DEBIAN_CONFIGS
    base: str = ""


FLAVOURS: Dict[str, Flavour] = {
    "guest": Flavour(("qemu-guest",), ("qemu-guest",)),
    "debug": Flavour(("qemu-guest", "debug"), ("qemu-guest", "debug")),
    "kasan": Flavour(("qemu-guest", "kasan"), ("qemu-guest", "kasan")),
    # The cpuhp trace events, for the split of a bringup by state.
    "trace": Flavour(("qemu-guest", "trace"), ("qemu-guest", "trace")),
    # Compile-only: options that need SMP drop out silently, so only the
    # flavour's own fragment is verified. On x86 HOTPLUG_CPU is
    # `def_bool y` on SMP, so this is also the HOTPLUG_CPU=n build.
    "nosmp": Flavour(("qemu-guest", "nosmp"), ("nosmp",)),
    # The tick rate, for what the periodic tick of the CPUs already
    # online costs a round-robin boot (`compare --config`).
    "hz100": Flavour(("qemu-guest", "hz100"), ("qemu-guest", "hz100")),
    "hz1000": Flavour(("qemu-guest", "hz1000"), ("qemu-guest", "hz1000")),
    # Up to 8192 CPUs, as Debian builds its kernels, for the scale suite
    # (`bench --suite scale`); qemu-guest's NR_CPUS=512 is overridden, so
    # only the flavour's own fragment is verified.
    "scale": Flavour(("qemu-guest", "scale"), ("scale",)),
    # The same at HZ=100: fewer periodic ticks for the round-robin guests
    # above 128 vCPUs to emulate (docs/limits.md, the tick livelock)
    "scale-hz100": Flavour(("qemu-guest", "scale", "hz100"),
                           ("scale", "hz100")),
    # Debian's cloud-amd64 kernel, as a cloud guest of Debian 12 runs it
    "cloud": Flavour(("debian-cloud",), ("debian-cloud",),
                     base="config.amd64_none_cloud-amd64.xz"),
    # Debian's full amd64 kernel (`bringup deb --config amd64`)
    "amd64": Flavour(("debian-cloud",), ("debian-cloud",),
                     base="config.amd64_none_amd64.xz"),
}


def parse(text: str) -> Dict[str, str]:
    """Options of a fragment or .config: name -> value ('n' if unset)."""
    opts: Dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        match = _SET.match(line)
        if match:
            opts[match.group(1)] = match.group(2)
            continue
        match = _UNSET.match(line)
        if match:
            opts[match.group(1)] = "n"
    return opts


def fragment_path(name: str) -> Path:
    path = KCONFIG / f"{name}.config"
    if not path.is_file():
        raise UsageError(f"no config fragment {path}")
    return path


def flavour(name: str) -> Flavour:
    try:
        return FLAVOURS[name]
    except KeyError:
        raise UsageError(f"unknown config '{name}' (known: "
                         f"{', '.join(FLAVOURS)})") from None


_ADDED_OPTION = re.compile(r"^\+[ \t]*(?:menu)?config[ \t]+(\w+)[ \t]*$",
                           re.MULTILINE)


def overlay_options(overlay: Path = OVERLAY) -> List[str]:
    """The options the lab overlay's patches add to Kconfig: a tree
    without the overlay (buildtest's, which compares base and series)
    cannot have them."""
    return sorted({f"CONFIG_{name}" for patch in overlay.glob("*.patch")
                   for name in _ADDED_OPTION.findall(patch.read_text())})


def expected(flav: Flavour, overlay: bool = True) -> Dict[str, str]:
    want: Dict[str, str] = {}
    for name in flav.verify:
        want.update(parse(fragment_path(name).read_text()))
    if not overlay:
        for opt in overlay_options():
            want.pop(opt, None)
    return want


def mismatches(want: Dict[str, str], dotconfig: str) -> List[str]:
    """Requested options that did not stick, as 'OPT: want X, got Y'."""
    have = parse(dotconfig)
    bad = []
    for opt, val in want.items():
        got = have.get(opt, "n")
        if got != val:
            bad.append(f"{opt}: want {val}, got {got}")
    return bad


def debian_config(name: str) -> bytes:
    """One of Debian's kernel configs, installing linux-config-6.1 first
    if it is missing."""
    packages.ensure(["debian-configs"])
    src = DEBIAN_CONFIGS / name
    if not src.is_file():
        raise InfraError(f"no Debian config {src} (package linux-config-6.1)")
    return lzma.decompress(src.read_bytes())


def configure(tree: Path, out: Path, name: str,
              overlay: bool = True) -> None:
    """Write out/.config = tinyconfig (or the flavour's Debian config) +
    the flavour's fragments; verify (without the lab overlay's options
    for a tree without it)."""
    flav = flavour(name)
    out.mkdir(parents=True, exist_ok=True)
    frags = [str(fragment_path(f)) for f in flav.fragments]
    if flav.base:
        (out / ".config").write_bytes(debian_config(flav.base))
    else:
        run(["make", "-s", f"O={out}", "tinyconfig"], cwd=tree, quiet=True)
    run(["scripts/kconfig/merge_config.sh", "-m", "-O", str(out),
         str(out / ".config"), *frags], cwd=tree, quiet=True)
    run(["make", "-s", f"O={out}", "olddefconfig"], cwd=tree, quiet=True)
    bad = mismatches(expected(flav, overlay),
                     (out / ".config").read_text())
    if bad:
        raise InfraError(f"config '{name}': {len(bad)} requested options did "
                         f"not stick: {'; '.join(bad[:4])}")
