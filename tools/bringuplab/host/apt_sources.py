"""The Debian mirror this machine's own apt sources already name.

The lab adds one apt source, for bookworm-backports (packages.py). It
takes the mirror from the sources that serve bookworm itself, in
/etc/apt/sources.list and /etc/apt/sources.list.d/*.list (one-line
format) or *.sources (deb822), so that a machine behind a local mirror
or an apt proxy keeps using it. Pure functions but for read_all().
"""
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ETC_APT = Path("/etc/apt")


@dataclass(frozen=True)
class Source:
    """One apt source entry: a URI serving some suites."""
    uri: str
    suites: Tuple[str, ...]
    components: Tuple[str, ...]
    signed_by: Optional[str]
    origin: str                  # the file it came from


def parse_one_line(text: str, origin: str = "") -> List[Source]:
    """`deb [opt=val ...] URI SUITE COMPONENT...` lines; deb-src and
    comments are skipped."""
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line.startswith("deb "):
            continue
        options: Dict[str, str] = {}
        rest = line[4:].strip()
        if rest.startswith("["):
            opts, _, rest = rest[1:].partition("]")
            for opt in opts.split():
                key, _, value = opt.partition("=")
                options[key] = value
        words = rest.split()
        if len(words) < 2:
            continue
        out.append(Source(words[0], (words[1],), tuple(words[2:]),
                          options.get("signed-by"), origin))
    return out


def _stanzas(text: str) -> List[Dict[str, str]]:
    """deb822 paragraphs as field -> value (continuation lines joined)."""
    stanzas: List[Dict[str, str]] = []
    fields: Dict[str, str] = {}
    last = ""
    for line in text.splitlines() + [""]:
        if line.startswith("#"):
            continue
        if not line.strip():
            if fields:
                stanzas.append(fields)
            fields, last = {}, ""
            continue
        if line[0] in " \t" and last:
            fields[last] += "\n" + line.strip()
            continue
        key, sep, value = line.partition(":")
        if sep:
            last = key.strip().lower()
            fields[last] = value.strip()
    return stanzas


def parse_deb822(text: str, origin: str = "") -> List[Source]:
    """The `Types: deb` stanzas of a .sources file that are not
    `Enabled: no`, one Source per URI."""
    out = []
    for fields in _stanzas(text):
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() == "no":
            continue
        signed = fields.get("signed-by")
        # Signed-By may hold a key block rather than a path: keep a path
        if signed and ("\n" in signed or not signed.startswith("/")):
            signed = None
        for uri in fields.get("uris", "").split():
            out.append(Source(uri, tuple(fields.get("suites", "").split()),
                              tuple(fields.get("components", "").split()),
                              signed, origin))
    return out


def read_all(etc: Path = ETC_APT, skip: Tuple[str, ...] = ()
             ) -> List[Source]:
    """Every enabled source of the machine, sources.list first, then the
    files of sources.list.d in name order; files named in `skip` (the
    lab's own) are left out."""
    files = [etc / "sources.list"]
    part = etc / "sources.list.d"
    if part.is_dir():
        files += sorted(p for p in part.iterdir()
                        if p.suffix in (".list", ".sources"))
    out: List[Source] = []
    for path in files:
        if path.name in skip or not path.is_file():
            continue
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        parse = parse_deb822 if path.suffix == ".sources" else \
            parse_one_line
        out += parse(text, str(path))
    return out


def release_of(suite: str) -> str:
    """'bookworm-backports' -> 'bookworm'."""
    return re.sub(r"-backports$", "", suite)


def mirror_for(sources: List[Source], suite: str) -> Optional[Source]:
    """The first source that serves the release `suite` belongs to
    (bookworm for bookworm-backports): its mirror has the backports."""
    release = release_of(suite)
    for src in sources:
        if release in src.suites:
            return src
    return None


def deb822(src: Source, suite: str) -> str:
    """A .sources stanza for `suite` from the mirror of `src`."""
    text = (f"Types: deb\nURIs: {src.uri}\nSuites: {suite}\n"
            "Components: main\n")
    if src.signed_by:
        text += f"Signed-By: {src.signed_by}\n"
    return text
