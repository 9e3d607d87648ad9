"""`bringup buildtest`: base and series built side by side for many
targets, as the kernel test robot would.

A target fails on a build error in either tree, and on any warning of
the series build that the base build of the same target does not have.
Warnings are compared by (file, function, kind, text): line and column
numbers are left out, so a warning that only moved is not new.
"""
import posixpath
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

# `file:line[:col]: warning: text`: gcc, sparse, Kconfig (no space
# before the kind), objtool/ld/cc1 without a line number.
_AT_LINE = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?:(?P<col>\d+):)?"
                      r"\s?(?P<kind>warning|error):\s*(?P<text>.*)$")
_AT_TOOL = re.compile(r"^(?P<file>[^\s:]+): (?P<kind>warning|error):"
                      r"\s*(?P<text>.*)$")
# modpost and Kconfig: `WARNING: modpost: ...`, `WARNING: unmet ...`
_SHOUTED = re.compile(r"^(?P<kind>WARNING|ERROR): (?P<text>.*)$")
# gcc's context line before the diagnostics of one function
_IN_FUNCTION = re.compile(r"^(?P<file>[^\s:]+): In (?:static |member )?"
                          r"function '(?P<func>[^']+)'[:,]$")
_TOP_LEVEL = re.compile(r"^(?P<file>[^\s:]+): At top level:$")
# kbuild's quiet command lines (`  CC      kernel/cpu.o`) start a new
# compiler run: gcc's function context does not carry over them.
_KBUILD_STEP = re.compile(r"^  [A-Z][A-Z0-9_]+(?: \[M\])? +\S+$")
_OBJTOOL_OFFSET = re.compile(r"\+0x[0-9a-f]+(?:/0x[0-9a-f]+)?")
_FRAME_SIZE = re.compile(r"frame size of \d+ bytes")

Key = Tuple[str, str, str, str]


@dataclass(frozen=True)
class Diag:
    """One warning (or error) of a build, its paths relative to the
    source or object tree."""
    file: str
    line: int
    column: int
    kind: str
    text: str
    function: str = ""

    @property
    def key(self) -> Key:
        """What base and series are compared by: no line or column."""
        return (self.file, self.function, self.kind, self.text)

    def show(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "") \
            + (f":{self.column}" if self.column else "")
        inside = f" (in {self.function})" if self.function else ""
        return f"{where}: {self.kind}: {self.text}{inside}" if where \
            else f"{self.kind}: {self.text}"


def relative_path(path: str, roots: Sequence[str] = (),
                  cwd: str = "") -> str:
    """`path` relative to the longest of `roots` it lies under; relative
    paths are taken from `cwd` (make runs the compiler in the object
    directory, so the source is `../linux/kernel/cpu.c` or absolute)."""
    full = posixpath.normpath(path if posixpath.isabs(path) or not cwd
                              else posixpath.join(cwd, path))
    for root in sorted((r.rstrip("/") for r in roots if r), key=len,
                       reverse=True):
        if full.startswith(root + "/"):
            return full[len(root) + 1:]
    return posixpath.normpath(path)


def normalize_text(text: str, roots: Sequence[str] = ()) -> str:
    """The words of a warning that stay when code moves: ASCII quotes,
    no tree paths, no objtool offsets, no frame sizes."""
    text = text.replace("\u2018", "'").replace("\u2019", "'")
    for root in roots:
        if root:
            text = text.replace(root.rstrip("/") + "/", "")
    text = _OBJTOOL_OFFSET.sub("", text)
    text = _FRAME_SIZE.sub("frame size of N bytes", text)
    return " ".join(text.split())


def _tool_name(name: str, cross: str) -> str:
    """`aarch64-linux-gnu-ld` -> `ld`, `make[2]` -> `make`."""
    if cross and name.startswith(cross):
        name = name[len(cross):]
    return re.sub(r"\[\d+\]$", "", name)


def parse_diagnostics(output: str, tree: str = "", out: str = "",
                      cross: str = "") -> List[Diag]:
    """Every warning and error line of a build's output, in order.

    `tree` and `out` are the source and object directories of the build
    (absolute), `cross` its CROSS_COMPILE prefix; notes and source
    excerpts are skipped, gcc's "In function" lines name the function.
    """
    roots = (tree, out)
    context: Dict[str, str] = {}
    found: List[Diag] = []
    for raw in output.replace("\u2018", "'").replace("\u2019", "'") \
            .splitlines():
        line = raw.rstrip()
        if _KBUILD_STEP.match(line):
            context.clear()
            continue
        match = _IN_FUNCTION.match(line)
        if match:
            context[relative_path(match["file"], roots, out)] = match["func"]
            continue
        match = _TOP_LEVEL.match(line)
        if match:
            context.pop(relative_path(match["file"], roots, out), None)
            continue
        diag = _diag(line, roots, out, cross, context)
        if diag:
            found.append(diag)
    return found


def _diag(line: str, roots: Sequence[str], out: str, cross: str,
          context: Dict[str, str]) -> Optional[Diag]:
    match = _AT_LINE.match(line)
    if match:
        name = relative_path(match["file"], roots, out)
        return Diag(name, int(match["line"]), int(match["col"] or 0),
                    match["kind"], normalize_text(match["text"], roots),
                    context.get(name, ""))
    match = _AT_TOOL.match(line)
    if match:
        name = _tool_name(relative_path(match["file"], roots, out), cross)
        return Diag(name, 0, 0, match["kind"],
                    normalize_text(match["text"], roots),
                    context.get(name, ""))
    match = _SHOUTED.match(line)
    if match:
        return Diag("", 0, 0, match["kind"].lower(),
                    normalize_text(match["text"], roots))
    return None


def new_diagnostics(base: Sequence[Diag], series: Sequence[Diag]
                    ) -> List[Diag]:
    """The series' diagnostics whose key the base build does not have,
    each key once, in the order the series build printed them."""
    known = {d.key for d in base}
    new: List[Diag] = []
    for diag in series:
        if diag.key not in known:
            known.add(diag.key)
            new.append(diag)
    return new
