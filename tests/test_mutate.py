"""tools/mutate makes the mutants it promises."""
import ast
import importlib.machinery
import importlib.util
import re
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "mutate"
loader = importlib.machinery.SourceFileLoader("mutate", str(TOOL))
spec = importlib.util.spec_from_loader("mutate", loader)
assert spec
mutate = importlib.util.module_from_spec(spec)
loader.exec_module(mutate)

SOURCE = '''\
def rule(facts, want):
    why = []
    if facts.count != want.count:
        why.append("count")
    while facts.more:
        why += ["more"]
    return [x for x in why if x] if why else []
'''


def test_the_mutants_of_a_rule():
    got = [(m.line, m.what) for m in mutate.mutants("rule.py", SOURCE)]
    assert got == [
        (3, "negate if `facts.count != want.count`"),
        (4, "drop `why.append('count')`"),
        (3, "flip `!=` to `==` in `facts.count != want.count`"),
        (5, "negate while `facts.more`"),
        (6, "drop `why += ['more']`"),
        (7, "negate conditional `why`"),
        (7, "negate comprehension if `x`"),
    ]


def test_each_mutant_changes_one_thing_and_compiles():
    control = ast.unparse(ast.parse(SOURCE))
    for mutant in mutate.mutants("rule.py", SOURCE):
        compile(mutant.source, "rule.py", "exec")
        diff = [(a, b) for a, b in zip(control.splitlines(),
                                       mutant.source.splitlines()) if a != b]
        assert len(diff) == 1, mutant


def test_every_comparison_flips_to_its_negation():
    flips = {mutate.SYMBOL[a]: mutate.SYMBOL[b]
             for a, b in mutate.FLIP.items()}
    assert flips == {"==": "!=", "!=": "==", "<": ">=", ">=": "<",
                     ">": "<=", "<=": ">", "in": "not in", "not in": "in",
                     "is": "is not", "is not": "is"}


PATTERNS = '''\
import re
KINDS = (("a", ("x", "y")),)
LINE = re.compile(r"(?:smpboot|cpuhp): (parallel|serial)")


def first(lines):
    return lines[:5] if len(lines) > 1.5 else lines
'''


def test_the_mutants_of_constants_strings_and_patterns():
    got = [what for _, what, in
           ((m.line, m.what) for m in mutate.mutants("p.py", PATTERNS))]
    assert got == [
        "drop 'x' from `('x', 'y')`", "drop 'y' from `('x', 'y')`",
        "never match regex alternative 'smpboot'",
        "never match regex alternative 'cpuhp'",
        "never match regex alternative 'parallel'",
        "never match regex alternative 'serial'",
        "negate conditional `len(lines) > 1.5`",
        "flip `>` to `<=` in `len(lines) > 1.5`",
        "constant 1.5 to 1.575",
        "constant 5 to 6", "constant 5 to 4",
    ]


def test_a_regex_alternative_is_made_one_that_never_matches():
    def disabled(pattern):
        return [mutate.without_branch(pattern, span)
                for span in mutate.branches(pattern)]
    assert disabled(r"a|b|c") == ["(?!)a|b|c", "a|(?!)b|c", "a|b|(?!)c"]
    # classes, escapes, named groups, inline flags, comments
    assert disabled(r"x[|a]|\||(?P<n>u|v)w") == [
        r"(?!)x[|a]|\||(?P<n>u|v)w", r"x[|a]|(?!)\||(?P<n>u|v)w",
        r"x[|a]|\||(?!)(?P<n>u|v)w", r"x[|a]|\||(?P<n>(?!)u|v)w",
        r"x[|a]|\||(?P<n>u|(?!)v)w"]
    assert disabled(r"(a)|b") == ["(?!)(a)|b", "(a)|(?!)b"]
    assert disabled(r"(?i:a|b)c(?#x|y)") == ["(?i:(?!)a|b)c(?#x|y)",
                                             "(?i:a|(?!)b)c(?#x|y)"]
    assert mutate.branches(r"no alternatives (here)") == []
    assert mutate.branches(r"(?x) a | b") == []
    # every mutant compiles, and its groups keep their numbers
    for pattern in (r"(a)|b", r"x[|a]|\||(?P<n>u|v)w", r"(?i:a|b)c",
                    r"(?:smpboot|cpuhp): (parallel|serial) (\d+)"):
        for mutant in disabled(pattern):
            assert re.compile(mutant).groups == re.compile(pattern).groups


def test_the_tests_of_a_module_are_those_that_import_it(tmp_path):
    (tmp_path / "test_a.py").write_text(
        "from bringuplab.verdict import judge, x\n")
    (tmp_path / "test_b.py").write_text("import bringuplab.verdict.judge\n")
    (tmp_path / "test_c.py").write_text(
        "from bringuplab.verdict.judge import E\n")
    (tmp_path / "test_d.py").write_text(
        "from bringuplab.verdict import judgement\n")
    (tmp_path / "test_e.py").write_text("from bringuplab.runs import judge\n")
    (tmp_path / "test_judge_z.py").write_text(
        "from bringuplab.verdict import judge\n")
    # its own tests first
    assert mutate.importers("tools/bringuplab/verdict/judge.py",
                            tmp_path) == [
        "tests/test_judge_z.py", "tests/test_a.py", "tests/test_b.py",
        "tests/test_c.py"]
