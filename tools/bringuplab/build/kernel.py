"""Building bzImage out of tree, with ccache and a progress count."""
import filecmp
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from bringuplab.build import kconfig, worktree
from bringuplab.report import record
from bringuplab.errors import InfraError
from bringuplab.paths import BUILD, LOGS, OVERLAY, TREE, out_dir
from bringuplab.progress import duration
from bringuplab.run import output

# Flavours built with the lab overlay (lab/patches/: fault injection) on
# top of the series; every other flavour is the series alone.
OVERLAY_FLAVOURS = ("debug",)


# Where a build puts bzImage, in its out dir.
IMAGE = Path("arch/x86/boot/bzImage")


@dataclass(frozen=True)
class Kernel:
    """A kernel the lab built (or was given): its bzImage and the out
    dir beside it, where its .config and System.map are."""
    image: Path
    out: Path
    flavour: str = ""          # kconfig flavour ("" if unknown)
    revision: str = ""         # git HEAD of the tree built ("" if unknown)

    @property
    def config(self) -> Path:
        return self.out / ".config"

    @property
    def system_map(self) -> Path:
        return self.out / "System.map"


def built_in(out: Path, flavour: str = "", revision: str = "") -> Kernel:
    """The kernel of an out dir (O=out)."""
    return Kernel(out / IMAGE, out, flavour, revision)


def of_image(image: Path) -> Kernel:
    """A bzImage given by its path (--kernel): with its out dir when it
    sits where a build puts it, else the folder it is in (no .config)."""
    if image.parts[-len(IMAGE.parts):] == IMAGE.parts:
        out = image.parents[len(IMAGE.parts) - 1]
        return Kernel(image, out, out.name.removeprefix("out-"))
    return Kernel(image, image.parent)


def given(path: Optional[str]) -> Kernel:
    """The kernel of a --kernel option: that bzImage, by default the
    guest kernel `bringup kernel` builds."""
    return of_image(Path(path)) if path else built_in(out_dir("guest"),
                                                      "guest")


def tree_revision(tree: Path) -> str:
    """git HEAD of a kernel tree, "" if it has none."""
    proc = subprocess.run(["git", "-C", str(tree), "rev-parse", "-q",
                           "--verify", "HEAD"], capture_output=True,
                          text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


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
         jobs: int = 2, expected: int = 0) -> None:
    """Run make with a progress line every 250 compiled objects; with
    the number of objects `expected`, how far and an ETA."""
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
                    took = time.monotonic() - start
                    print("lab: kernel: "
                          + progress_line(count, expected, took),
                          file=sys.stderr, flush=True)
        ret = proc.wait()
    if ret != 0:
        errors = [ln.rstrip() for ln in log.read_text().splitlines()
                  if "error" in ln.lower()]
        first = errors[0] if errors else f"make exit {ret}"
        raise InfraError(f"kernel build failed: {first} (log: {log})")


def progress_line(count: int, expected: int, elapsed: float) -> str:
    """'250 objects, 40 s', or with the objects expected '250/9000
    objects (3%), 40 s, ETA 23 min' (the rate so far; past the
    expected count, 'ETA soon')."""
    if expected <= 0:
        return f"{count} objects, {elapsed:.0f} s"
    left = (f"ETA {duration(elapsed / count * (expected - count))}"
            if count < expected else "ETA soon")
    return (f"{count}/{expected} objects ({100 * count // expected}%), "
            f"{elapsed:.0f} s, {left}")


def overlay_path(src: Path) -> Path:
    """Where overlay_tree() keeps the overlay's worktree of `src`."""
    return src.parent / "overlay" / "linux"


def overlay_tree(src: Path) -> Path:
    """A worktree beside `src` (overlay_path()) at src's HEAD with the
    lab overlay applied; the series itself never needs it."""
    dest = overlay_path(src)
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


def build(name: str = "guest", tree: Path = TREE,
          out: Optional[Path] = None, tag: str = "") -> Kernel:
    """Configure and build bzImage for flavour `name`; the Kernel built.
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
    kern = built_in(out, name, tree_revision(tree))
    # by the name of its build log without "kernel-": what the records
    # of this process hash
    record.BUILT[f"{name}{tag}"] = kern.config
    print(f"lab: kernel '{name}' built in "
          f"{time.monotonic() - started:.0f} s: {kern.image}",
          file=sys.stderr)
    return kern
