"""Building bzImage out of tree, with ccache and a progress count."""
import filecmp
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

from . import kconfig, worktree
from .errors import InfraError
from .paths import BUILD, LOGS, OVERLAY, TREE, out_dir
from .run import output

# Flavours built with the lab overlay (lab/patches/: fault injection) on
# top of the series; every other flavour is the series alone.
OVERLAY_FLAVOURS = ("debug",)


# The .config of every kernel built in this process, by the name of its
# build log without "kernel-" (NAME and TAG): what a run's record hashes.
BUILT: Dict[str, Path] = {}


def ensure_config(tree: Path, out: Path, name: str) -> None:
    """(Re)write out/.config only if it would change, so builds stay
    incremental."""
    scratch = out.with_name(out.name + ".cfg")
    kconfig.configure(tree, scratch, name)
    new, old = scratch / ".config", out / ".config"
    out.mkdir(parents=True, exist_ok=True)
    if not old.exists() or not filecmp.cmp(new, old, shallow=False):
        shutil.copy(new, old)
    shutil.rmtree(scratch, ignore_errors=True)


def make(tree: Path, out: Path, targets: List[str], log: Path,
         jobs: int = 2) -> None:
    """Run make with a progress line every 250 compiled objects."""
    log.parent.mkdir(parents=True, exist_ok=True)
    argv = ["make", f"O={out}", f"-j{jobs}", "CC=ccache gcc",
            "HOSTCC=gcc", *targets]
    if not shutil.which("ccache"):
        argv.remove("CC=ccache gcc")
    # Absolute paths under build/ become relative, so scratch trees laid
    # out like build/linux + build/out-NAME share ccache entries.
    env = dict(os.environ)
    env.setdefault("CCACHE_BASEDIR", str(BUILD))
    start, count = time.monotonic(), 0
    with log.open("w") as logf:
        proc = subprocess.Popen(argv, cwd=tree, env=env,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            logf.write(line)
            if line.lstrip().startswith("CC "):
                count += 1
                if count % 250 == 0:
                    print(f"lab: kernel: {count} objects, "
                          f"{time.monotonic() - start:.0f} s",
                          file=sys.stderr, flush=True)
        ret = proc.wait()
    if ret != 0:
        errors = [ln.rstrip() for ln in log.read_text().splitlines()
                  if "error" in ln.lower()]
        first = errors[0] if errors else f"make exit {ret}"
        raise InfraError(f"kernel build failed: {first} (log: {log})")


def overlay_tree(src: Path) -> Path:
    """A worktree beside `src` (src/../overlay/linux) at src's HEAD with
    the lab overlay applied; the series itself never needs it."""
    dest = src.parent / "overlay" / "linux"
    head = output(["git", "-C", str(src), "rev-parse", "HEAD"]).strip()
    worktree.fresh(dest, rev=head, tree=src)
    patches = sorted(OVERLAY.glob("*.patch"))
    proc = subprocess.run(["git", "-C", str(dest), "-c",
                           "user.name=Bringup Lab", "-c",
                           "user.email=lab@localhost", "am", "-q",
                           *map(str, patches)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        subprocess.run(["git", "-C", str(dest), "am", "--abort"],
                       capture_output=True, check=False)
        first = (proc.stdout + proc.stderr).strip().splitlines()[:1]
        raise InfraError(f"lab overlay does not apply on {head[:12]}: "
                       f"{first[0] if first else 'git am failed'}")
    return dest


def build(name: str = "guest", tree: Path = TREE, out: Path = None,
          tag: str = "") -> Path:
    """Configure and build bzImage for flavour `name`; return its path.
    Flavours in OVERLAY_FLAVOURS build tree's HEAD plus the lab overlay."""
    out = out or out_dir(name)
    if not (tree / "Makefile").is_file():
        raise InfraError(f"no kernel tree at {tree}: run `bringup tree`")
    if name in OVERLAY_FLAVOURS and any(OVERLAY.glob("*.patch")):
        tree = overlay_tree(tree)
    ensure_config(tree, out, name)
    started = time.monotonic()
    log = LOGS / f"kernel-{name}{tag}.log"
    make(tree, out, ["bzImage"], log)
    BUILT[f"{name}{tag}"] = out / ".config"
    image = out / "arch/x86/boot/bzImage"
    print(f"lab: kernel '{name}' built in "
          f"{time.monotonic() - started:.0f} s: {image}", file=sys.stderr)
    return image
