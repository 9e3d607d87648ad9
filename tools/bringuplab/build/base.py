"""The pinned base: a Debian linux-source package, verified by checksum."""
import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict

from bringuplab.errors import InfraError
from bringuplab.paths import BASE_FILE


@dataclass(frozen=True)
class Base:
    package: str
    version: str
    tarball: Path
    sha256: str
    kernelversion: str


def parse_base(text: str) -> Base:
    """Parse the `key = value` BASE file."""
    fields: Dict[str, str] = {}
    for num, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise InfraError(f"BASE line {num}: expected 'key = value'")
        fields[key.strip()] = value.strip()
    try:
        return Base(fields["package"], fields["version"],
                    Path(fields["tarball"]), fields["sha256"].lower(),
                    fields["kernelversion"])
    except KeyError as err:
        raise InfraError(f"BASE: missing field {err.args[0]}") from None


def load(path: Path = BASE_FILE) -> Base:
    if not path.is_file():
        raise InfraError(f"no pin file {path}")
    return parse_base(path.read_text())


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fobj:
        for block in iter(lambda: fobj.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _installed_version(pkg: str) -> str:
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _apt_install(spec: str) -> bool:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    proc = subprocess.run(["apt-get", "install", "-y", "-qq",
                           "--allow-downgrades", spec], env=env, text=True,
                          capture_output=True, check=False)
    return proc.returncode == 0


def fetch(base: Base) -> Base:
    """Make sure the base tarball is present and intact.

    Returns the base actually used: the pinned one, or, if the archive no
    longer serves the pinned version, the newest one (with a warning).
    """
    if _installed_version(base.package) != base.version:
        if os.geteuid() != 0:
            raise InfraError(f"{base.package} {base.version} is not installed;"
                             " run as root so the lab can install it")
        subprocess.run(["apt-get", "update", "-qq"], check=False,
                       capture_output=True)
        if not _apt_install(f"{base.package}={base.version}"):
            if not _apt_install(base.package):
                raise InfraError(f"cannot install {base.package} from the "
                                 "Debian archive")
            newest = _installed_version(base.package)
            print(f"lab: WARNING: pinned {base.package} {base.version} is no"
                  f" longer served; using {newest} (checksum not pinned)",
                  file=sys.stderr)
            return Base(base.package, newest, base.tarball, "",
                        base.kernelversion)
    verify(base)
    return base


def verify(base: Base) -> None:
    """Fail with one line unless the tarball exists and matches."""
    if not base.tarball.is_file():
        raise InfraError(f"base tarball {base.tarball} is missing "
                         f"(package {base.package} {base.version})")
    if base.sha256 and sha256(base.tarball) != base.sha256:
        raise InfraError(f"base tarball {base.tarball} is corrupt: SHA-256 "
                         "differs from the pin in BASE "
                         f"({base.sha256[:12]}...)")
