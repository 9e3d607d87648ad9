"""What kbuild prints and what its makefiles build: a build's warnings
keyed so base and series builds can be compared (line and column
numbers left out), and which changed files a config compiles."""
import posixpath
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

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


# --- Which touched objects a config builds ------------------------------
#
# `make dir/file.o` compiles the file even where the config leaves it
# out (e.g. arch/x86/xen/smp_pv.o without XEN), and such a file need not
# compile at all. So the touched objects are first looked up in kbuild's
# makefiles: a file named only under options the .config does not set,
# or in a directory so named, is left out. Where the makefiles do not
# tell (variables in the name, conditions other than CONFIG_ ones) the
# object is built.

_ASSIGN = re.compile(r"^(?P<var>[A-Za-z0-9_.-]+?)-(?:y|objs|\$\(CONFIG_"
                     r"(?P<opt>[A-Za-z0-9_]+)\))\s*(?::=|\+=|=)\s*"
                     r"(?P<rhs>.*)$")
_IFDEF = re.compile(r"^(?P<op>ifdef|ifndef)\s+CONFIG_(?P<opt>[A-Za-z0-9_]+)$")
_IFEQ = re.compile(r"^(?P<op>ifeq|ifneq)\s*\(\s*\$\(CONFIG_(?P<opt>"
                   r"[A-Za-z0-9_]+)\)\s*,\s*(?P<val>[^)\s]*)\s*\)$")
# kbuild lists whose members are built when the line's condition holds
_BUILT_LISTS = ("obj", "lib", "extra", "always", "core")

Config = Dict[str, str]


def _value(config: Config, opt: str) -> str:
    return config.get(f"CONFIG_{opt}", "n")


def _condition(line: str, config: Config) -> Optional[bool]:
    """A makefile conditional's truth, None if it is not a CONFIG_ test
    this understands."""
    match = _IFDEF.match(line)
    if match:
        defined = _value(config, match["opt"]) != "n"
        return defined if match["op"] == "ifdef" else not defined
    match = _IFEQ.match(line)
    if match:
        value = _value(config, match["opt"])
        equal = (value if value != "n" else "") == match["val"]
        return equal if match["op"] == "ifeq" else not equal
    return None


def _logical_lines(text: str) -> List[str]:
    lines = text.replace("\\\n", " ").splitlines()
    return [line.split("#", 1)[0].strip() for line in lines]


def makefile_verdict(text: str, name: str, config: Config,
                     depth: int = 0) -> Optional[bool]:
    """Whether kbuild makefile `text` builds `name` ("smp_pv.o", or a
    subdirectory "xen/") with `config`: True, False if it names it only
    where the config leaves it out, None if it does not name it."""
    stack: List[Optional[bool]] = []
    named = False
    for line in _logical_lines(text):
        word = line.split(maxsplit=1)[0] if line else ""
        if word in ("ifdef", "ifndef", "ifeq", "ifneq"):
            stack.append(_condition(line, config))
            continue
        if word == "else":
            if stack:
                last = stack[-1]
                stack[-1] = None if last is None or line != "else" \
                    else not last
            continue
        if word == "endif":
            if stack:
                stack.pop()
            continue
        match = _ASSIGN.match(line)
        if not match or name not in match["rhs"].split():
            continue
        named = True
        if False in stack or (match["opt"] and
                              _value(config, match["opt"]) == "n"):
            continue
        if match["var"] in _BUILT_LISTS or depth > 3:
            return True
        # A part of a composite object: built when that object is.
        if makefile_verdict(text, match["var"] + ".o", config,
                            depth + 1) is not False:
            return True
    return False if named else None


def object_enabled(obj: str, read: Callable[[str], Optional[str]],
                   config: Config) -> bool:
    """Whether `obj` ("arch/x86/xen/smp_pv.o") is built with `config`:
    its own directory's makefile, then each parent's for the directory,
    up to a top-level directory or arch/ARCH. `read(dir)` gives the
    directory's Kbuild or Makefile text, None if it has neither."""
    directory, name = posixpath.split(obj)
    while directory:
        text = read(directory)
        if text is not None and \
                makefile_verdict(text, name, config) is False:
            return False
        parent = posixpath.dirname(directory)
        if parent in ("", "arch"):
            return True
        name, directory = posixpath.basename(directory) + "/", parent
    return True


def touched_objects(paths: Sequence[str], srcarch: str) -> List[str]:
    """The kernel objects of the changed files: .c files outside tools,
    scripts and docs, and outside other architectures than `srcarch`."""
    objs = []
    for path in paths:
        top = path.split("/", 1)[0]
        if not path.endswith(".c") or top in (
                "tools", "scripts", "Documentation", "samples", "usr"):
            continue
        if top == "arch" and not path.startswith(f"arch/{srcarch}/"):
            continue
        objs.append(path[:-2] + ".o")
    return sorted(set(objs))
