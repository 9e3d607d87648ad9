"""Every record kept in records/ is one `bringup render` prints, of
whatever kind and age (the README says so)."""
from pathlib import Path

import pytest

from bringuplab.report import record, render

KEPT = sorted((Path(__file__).resolve().parents[1] / "records")
              .glob("*.json"))


def test_there_are_records():
    assert len(KEPT) > 10


@pytest.mark.parametrize("path", KEPT, ids=[p.name for p in KEPT])
def test_a_kept_record_renders(path):
    rec = record.load(path)
    text = render.markdown(rec)
    assert text.startswith("# ") and rec.kind in record.KINDS
