"""The package's layout shows the pipeline: each module in its stage's
subpackage, and the stages that only read (verdict, report) never reach
a module that builds or boots, however indirectly."""
import ast
from pathlib import Path
from typing import Dict, List, Set

from bringuplab import cli

PACKAGE = Path(cli.__file__).parent
SHARED = {"bringuplab", "bringuplab.cli", "bringuplab.errors",
          "bringuplab.paths", "bringuplab.progress", "bringuplab.run"}
STAGES = ("build", "guest", "host", "report", "runs", "verdict")
# What builds a kernel or starts QEMU
ACTIVE = ("bringuplab.runs.", "bringuplab.build.kernel",
          "bringuplab.build.kbuild", "bringuplab.build.deb",
          "bringuplab.guest.boot", "bringuplab.guest.image")


def name_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def graph() -> Dict[str, Set[str]]:
    """Each module of the package and the package's modules it imports."""
    modules = {name_of(p): p for p in PACKAGE.rglob("*.py")}
    out: Dict[str, Set[str]] = {}
    for name, path in modules.items():
        deps: Set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module \
                    and node.module.startswith("bringuplab"):
                assert node.level == 0, f"{name}: relative import"
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    deps.add(full if full in modules else node.module)
        out[name] = deps - {name}
    return out


def reach(start: str, edges: Dict[str, Set[str]]) -> Set[str]:
    seen: Set[str] = set()
    todo = [start]
    while todo:
        for dep in edges.get(todo.pop(), set()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def test_every_module_is_in_a_stage_or_shared():
    for name in graph():
        stage = name.split(".")[1] if "." in name else ""
        assert name in SHARED or stage in STAGES, name


def offenders(edges: Dict[str, Set[str]]) -> List[str]:
    """Each reading module (verdict, report) that reaches an active one."""
    out = []
    for name in sorted(edges):
        if name.split(".")[1:2] not in (["report"], ["verdict"]):
            continue
        bad = sorted(dep for dep in reach(name, edges)
                     if dep.startswith(ACTIVE))
        if bad:
            out.append(f"{name} reaches {bad}")
    return out


def test_the_reading_stages_reach_nothing_that_builds_or_boots():
    assert offenders(graph()) == []


def test_the_check_sees_a_reading_module_that_reaches_a_run():
    """render -> stats -> (a new import of) bench: caught two steps away."""
    edges = graph()
    edges["bringuplab.report.stats"] = edges["bringuplab.report.stats"] \
        | {"bringuplab.runs.bench"}
    assert any(o.startswith("bringuplab.report.render reaches")
               for o in offenders(edges))
