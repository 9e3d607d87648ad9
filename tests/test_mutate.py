"""tools/mutate makes the mutants it promises."""
import ast
import importlib.machinery
import importlib.util
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
