"""`bringup deb`: the series as a Debian kernel package.

Debian's linux-source-6.1 (the pinned base) with patches/ applied by
`git am` in a scratch worktree (build/deb/linux; the developer's
build/linux is never touched), configured with one of Debian's own
configs from linux-config-6.1 (kconfig flavour `cloud`: cloud-amd64,
`amd64`: the full one), built with `make bindeb-pkg` into
build/deb/out-CONFIG. The linux-image and linux-headers packages are
copied to results/deb/ with a .sha256 file each, and a `deb` record
says what built them.
"""
import re
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Dict, List, Optional

from bringuplab import progress
from bringuplab.build import base as basemod, kernel, tree
from bringuplab.host import packages
from bringuplab.report import record
from bringuplab.build import worktree
from bringuplab.errors import InfraError, UsageError
from bringuplab.paths import BUILD, LOGS

DEB = BUILD / "deb"
SRC = DEB / "linux"
PACKAGES = record.RESULTS / "deb"

# --config NAME -> the kconfig flavour and the name the release carries
CONFIGS: Dict[str, str] = {"cloud": "cloud-amd64", "amd64": "amd64"}

# Objects a full build compiles (kbuild's "CC" lines, modules and
# their .mod.o included), for the ETA before the first build of a config
# has left a log to count: measured on this lab's builds.
OBJECTS: Dict[str, int] = {"cloud": 9000, "amd64": 24000}

_RELEASE = re.compile(r"^[0-9A-Za-z.+~-]+$")


@dataclass(frozen=True)
class Naming:
    """What the package is called: `uname -r` says base, series and
    config, e.g. 6.1.192-bringup-d9f653a-cloud-amd64."""
    kernelversion: str
    series_rev: str
    config: str

    @property
    def localversion(self) -> str:
        return f"-bringup-{self.series_rev[:7]}-{CONFIGS[self.config]}"

    @property
    def release(self) -> str:
        return self.kernelversion + self.localversion

    @property
    def pkgversion(self) -> str:
        return f"{self.kernelversion}-1"

    def package(self, kind: str) -> str:
        """The .deb file name of linux-image or linux-headers."""
        return f"linux-{kind}-{self.release}_{self.pkgversion}_amd64.deb"


def naming(kernelversion: str, series_rev: str, config: str) -> Naming:
    """A Naming, checked: UsageError for a config the lab does not
    package, InfraError for a revision or version kbuild would refuse."""
    if config not in CONFIGS:
        raise UsageError(f"unknown --config '{config}' (known: "
                         f"{', '.join(CONFIGS)})")
    name = Naming(kernelversion, series_rev, config)
    if not re.fullmatch(r"[0-9a-f]{7,40}", series_rev) or \
            not _RELEASE.match(name.release) or len(name.release) > 64:
        raise InfraError(f"cannot name the package: release "
                         f"'{name.release}' (series revision "
                         f"'{series_rev}')")
    return name


@dataclass
class Built:
    """One package of a build: its file in results/deb/ and checksum."""
    name: str
    path: str
    sha256: str
    bytes: int


def expected_objects(config: str, log: Path) -> int:
    """How many objects the build will compile: the "CC" lines of the
    last build of this config if its log is there, else OBJECTS."""
    try:
        counted = sum(1 for line in log.read_text(errors="replace")
                      .splitlines() if line.lstrip().startswith("CC "))
    except OSError:
        counted = 0
    return counted if counted > 1000 else OBJECTS[config]


def prepare_tree(src: Path = SRC) -> str:
    """src = base + patches/ (left alone if it already holds exactly
    that, so a rebuild stays incremental); its HEAD."""
    if not tree.is_tree():
        raise InfraError("no work tree at build/linux: run `bringup tree`")
    files = tree.series_files()
    want = [tree.patch_id(p.read_text(errors="replace")) for p in files]
    if not (src / ".git").exists() or tree.tree_ids(src) != want or \
            tree.git(["status", "--porcelain", "--untracked-files=no"],
                     src).strip():
        worktree.fresh(src, "base")
        tree.apply_series(files, src)
    return kernel.tree_revision(src)


def collect(name: Naming, where: Path = DEB,
            dest: Path = PACKAGES) -> List[Built]:
    """Copy the image and headers packages of `name` from where kbuild
    put them (beside the out dir) to dest, each with NAME.sha256."""
    dest.mkdir(parents=True, exist_ok=True)
    built = []
    for kind in ("image", "headers"):
        src = where / name.package(kind)
        if not src.is_file():
            raise InfraError(f"make bindeb-pkg left no {src.name} in "
                             f"{where}")
        target = dest / src.name
        shutil.copyfile(src, target)
        digest = basemod.sha256(target)
        (dest / (src.name + ".sha256")).write_text(
            f"{digest}  {src.name}\n")
        built.append(Built(f"linux-{kind}-{name.release}", str(target),
                           digest, target.stat().st_size))
    return built


def build(config: str = "cloud", jobs: int = 2) -> record.Record:
    """Build the packages of the series with Debian config `config`;
    the record of the build (saved in results/)."""
    started = record.now()
    pin = basemod.load()
    name = naming(pin.kernelversion, record.patches_revision(), config)
    packages.ensure(["tree", "kernel", "deb"])
    progress.say(f"deb: linux-image-{name.release}: base "
                 f"{pin.package} {pin.version} + patches/ in {SRC}")
    head = prepare_tree()
    out = DEB / f"out-{config}"
    kernel.ensure_config(SRC, out, config)
    record.BUILT[f"deb-{config}"] = out / ".config"
    log = LOGS / f"deb-{config}.log"
    expect = expected_objects(config, log)
    clock = time.monotonic()
    # Stale packages of an earlier build must not be taken for new ones
    for kind in ("image", "headers"):
        (DEB / name.package(kind)).unlink(missing_ok=True)
    kernel.make(SRC, out, ["bindeb-pkg", f"LOCALVERSION={name.localversion}",
                           f"KDEB_PKGVERSION={name.pkgversion}"],
                log, jobs=jobs, expected=expect)
    took = time.monotonic() - clock
    built = collect(name)
    results = dict(
        release=name.release, pkgversion=name.pkgversion, config=config,
        debian_config=CONFIGS[config], base=dict(
            package=pin.package, version=pin.version, sha256=pin.sha256),
        # The patches revision the package is named by, taken before the
        # build (provenance's is taken after it)
        series=dict(patches=len(tree.series_files()), head=head,
                    revision=name.series_rev),
        packages=[asdict(b) for b in built], build_s=round(took),
        jobs=jobs, log=str(log))
    rec = record.make("deb", True, results, started)
    progress.say(f"deb: record {record.save(rec)}")
    return rec


def command(config: str, jobs: int) -> Optional[record.Record]:
    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    return build(config, jobs)
