"""One JSON record per run of check, bench, compare, soak and states:
what was run, from which sources, on what host, with which tools and
kernel configs, when, and what came of it.

Records go to results/ (ignored by git); a benchmark kept in the
repository is a record copied from there, rendered by `bringup render`,
never typed. load() also reads the result files written before records
(bench/*.json, the compare and states JSON), with no provenance.
"""
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

from bringuplab.errors import InfraError, UsageError, exit_status
from bringuplab.paths import PATCHES, ROOT

RESULTS = ROOT / "results"
SCHEMA = 1
KINDS = ("bench", "compare", "check", "soak", "states", "serialwork",
         "deb", "sysboot", "buildtest", "matrix", "demo")
UNKNOWN = "unknown"


def now() -> str:
    """UTC, to the second, ISO 8601."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class Host:
    cpu_model: str
    cpus: int
    os: str

    def describe(self) -> str:
        return f"{self.cpus} x {self.cpu_model}, {self.os}"


@dataclass
class Provenance:
    argv: List[str]
    lab_revision: str              # git rev-parse HEAD of the lab
    lab_dirty: bool                # uncommitted changes to tracked files
    patches_revision: str          # the last commit that touched patches/
    patches_dirty: bool
    qemu: str                      # qemu-system-x86_64 --version
    compiler: str                  # gcc --version
    host: Host
    configs: Dict[str, str]        # kernel built -> sha256 of its .config
    started: str
    ended: str


@dataclass
class Record:
    kind: str
    ok: bool
    results: dict
    provenance: Optional[Provenance] = None   # None: from before records
    schema: int = SCHEMA
    source: str = field(default="", compare=False)   # the file read

    def to_dict(self) -> dict:
        out = asdict(self)
        out.pop("source")
        return out


def first_line(argv: Sequence[str], cwd: Optional[Path] = None) -> str:
    """The first line a command prints, UNKNOWN if it cannot run."""
    try:
        proc = subprocess.run(list(argv), cwd=cwd, capture_output=True,
                              text=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return UNKNOWN
    lines = proc.stdout.strip().splitlines()
    return lines[0].strip() if proc.returncode == 0 and lines else UNKNOWN


def _dirty(root: Path, *paths: str) -> bool:
    return first_line(["git", "-C", str(root), "status", "--porcelain",
                       "--untracked-files=no", "--", *paths]) \
        not in (UNKNOWN, "")


def host(cpuinfo: str = "", os_release: str = "") -> Host:
    """This machine: CPU model and count, OS. The texts of /proc/cpuinfo
    and /etc/os-release are read unless given."""
    if not cpuinfo:
        cpuinfo = _read(Path("/proc/cpuinfo"))
    if not os_release:
        os_release = _read(Path("/etc/os-release"))
    model = next((line.split(":", 1)[1].strip()
                  for line in cpuinfo.splitlines()
                  if line.startswith("model name")),
                 platform.processor() or platform.machine() or UNKNOWN)
    name = next((line.split("=", 1)[1].strip().strip('"')
                 for line in os_release.splitlines()
                 if line.startswith("PRETTY_NAME=")), platform.system())
    return Host(model, os.cpu_count() or 0, name)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def config_hashes(configs: Mapping[str, Path]) -> Dict[str, str]:
    """name -> sha256 of each .config (UNKNOWN if it is gone)."""
    out = {}
    for name, path in sorted(configs.items()):
        try:
            out[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            out[name] = UNKNOWN
    return out


def _patches_dir(root: Path) -> str:
    """patches/ as a path git takes inside the repository at `root`."""
    return os.path.relpath(PATCHES, root) if PATCHES.is_relative_to(root) \
        else "patches"


def patches_revision(head: str = "HEAD", root: Path = ROOT) -> str:
    """The last commit that touched patches/ as of the lab's `head`."""
    rel = _patches_dir(root)
    return first_line(["git", "-C", str(root), "log", "-1", "--format=%H",
                       head, "--", rel])


def patch_code(text: str) -> str:
    """The code of one patch mail: its diff, without the headers, the
    changelog or the signature, which change no byte of the kernel."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith("diff --git ")), len(lines))
    end = next((i for i in range(len(lines) - 1, start - 1, -1)
                if lines[i] == "-- "), len(lines))
    return "\n".join(lines[start:end])


def series_code(rev: str = "HEAD", root: Path = ROOT) -> str:
    """A digest of the code patches/ held at the lab's `rev`: every
    patch's diff (main and split-out series, in file order), not its
    subject or changelog. Two revisions with the same digest build the
    same kernels, so a figure measured at one holds at the other.
    UNKNOWN if git cannot say."""
    rel = _patches_dir(root)
    git = ["git", "-C", str(root)]
    try:
        names = subprocess.run(
            git + ["ls-tree", "-r", "--name-only", rev, "--", rel],
            capture_output=True, text=True, check=True, timeout=30
        ).stdout.split()
        digest = hashlib.sha256()
        for name in sorted(n for n in names if n.endswith(".patch")
                           and not n.endswith("cover-letter.patch")):
            text = subprocess.run(
                git + ["show", f"{rev}:{name}"], capture_output=True,
                text=True, check=True, timeout=30).stdout
            series = os.path.relpath(os.path.dirname(name), rel)
            digest.update(f"{series}\n{patch_code(text)}\n".encode())
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    return digest.hexdigest()[:12] if names else UNKNOWN


def provenance(started: str, configs: Mapping[str, Path],
               argv: Optional[List[str]] = None,
               root: Path = ROOT) -> Provenance:
    """Everything about the run but its results; ended now."""
    git = ["git", "-C", str(root)]
    rel = _patches_dir(root)
    return Provenance(
        list(sys.argv if argv is None else argv),
        first_line(git + ["rev-parse", "HEAD"]), _dirty(root),
        patches_revision("HEAD", root), _dirty(root, rel),
        first_line(["qemu-system-x86_64", "--version"]),
        first_line(["gcc", "--version"]), host(),
        config_hashes(configs), started, now())


# The .config of every kernel this process built, by name: the build
# stages note each one here, and every record made since hashes them.
BUILT: Dict[str, Path] = {}


def make(kind: str, ok: bool, results: dict, started: str) -> Record:
    """The record of a run that began at `started` and ends now, with the
    configs of every kernel this process built (BUILT)."""
    return Record(kind, ok, results, provenance(started, BUILT))


def status_of(rec: Record) -> int:
    """The exit status a run's record means (errors.exit_status): its
    `infra` count, where it keeps one, is not a failure; a record that
    failed without counts is a failure."""
    if rec.ok:
        return 0
    infra = int(rec.results.get("infra", 0) or 0)
    failed = int(rec.results.get("failed", 0) or 0)
    if not infra:
        failed = max(failed, 1)
    return exit_status(failed, infra)


def save(rec: Record, folder: Optional[Path] = None) -> Path:
    """Write the record to results/KIND-STARTED.json; its path."""
    folder = RESULTS if folder is None else folder
    stamp = (rec.provenance.started if rec.provenance else now())
    stem = f"{rec.kind}-{stamp.replace('-', '').replace(':', '')}"
    path = folder / f"{stem}.json"
    count = 1
    try:
        folder.mkdir(parents=True, exist_ok=True)
        while path.exists():
            count += 1
            path = folder / f"{stem}-{count}.json"
    except OSError as err:
        raise InfraError(f"cannot write the record {path}: "
                         f"{err.strerror}") from None
    return rewrite(rec, path)


def rewrite(rec: Record, path: Path) -> Path:
    """Write the record to `path`, over what a run still going wrote
    there before (a soak keeps its record current after every boot)."""
    try:
        path.write_text(json.dumps(rec.to_dict(), indent=1) + "\n")
    except OSError as err:
        raise InfraError(f"cannot write the record {path}: "
                         f"{err.strerror}") from None
    return path


def from_dict(data: object, source: str = "") -> Record:
    """A record, or a result file from before records (bench, compare,
    states), as a Record; UsageError for anything else."""
    if isinstance(data, dict) and "kind" in data and "results" in data:
        if data["kind"] not in KINDS:
            raise UsageError(f"{source}: unknown kind of record "
                             f"'{data['kind']}'")
        prov = data.get("provenance")
        if prov is not None:
            prov = Provenance(**dict(prov, host=Host(**prov["host"])))
        return Record(data["kind"], bool(data.get("ok")), data["results"],
                      prov, int(data.get("schema", SCHEMA)), source)
    if isinstance(data, dict) and "arms" in data and "samples" in data:
        return Record("compare", _all_pass(data["samples"]), dict(data),
                      source=source)
    if isinstance(data, dict) and "samples" in data:
        return Record("bench", _all_pass(data["samples"]), dict(data),
                      source=source)
    if isinstance(data, dict) and "targets" in data and "repo" in data:
        # buildtest's own format, before it wrote the lab's records
        return Record("buildtest", not data.get("failed"), dict(data),
                      source=source)
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if "variant" in data[0]:
            return Record("bench", _all_pass(data), {"samples": data},
                          source=source)
        if "states" in data[0] and "mode" in data[0]:
            return Record("states", True, {"boots": data}, source=source)
    raise UsageError(f"{source or 'the file'} is not a record of the lab "
                     f"({', '.join(KINDS)})")


def _all_pass(samples: list) -> bool:
    return all(s.get("verdict") == "pass" for s in samples
               if isinstance(s, dict))


def read_json(path: Path) -> object:
    """A JSON file's data; UsageError, one line, if it cannot be read."""
    try:
        return json.loads(path.read_text())
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None
    except ValueError as err:
        raise UsageError(f"{path} is not JSON ({err})") from None


def load(path: Path) -> Record:
    data = read_json(path)
    try:
        return from_dict(data, str(path))
    except (TypeError, KeyError) as err:
        raise UsageError(f"{path} is not a record of the lab ({err})") \
            from None
