"""Stage 3, log -> verdict: what a console log says (parse.py), the
judge's verdict against what the boot was expected to do (judge.py,
result.py); states.py splits cpuhp trace lines per state. Nothing here
builds or boots."""
