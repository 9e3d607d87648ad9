"""A figure quoted from a record must come from a clean record of the
code quoted (quotes.py); each rule broken alone is named."""
import json
from pathlib import Path

import pytest

from bringuplab.report import quotes

# patches/ revision -> the series' code at it (record.series_code)
CODES = {"HEAD": "code-now", "now1": "code-now", "old1": "code-old"}


def rec(root: Path, name: str, rev: str, dirty: bool = False) -> str:
    (root / "records").mkdir(exist_ok=True)
    (root / "records" / name).write_text(json.dumps({
        "kind": "bench", "ok": True, "results": {}, "schema": 1,
        "provenance": {"lab_dirty": dirty, "patches_dirty": False,
                       "patches_revision": rev}}))
    return f"records/{name}"


def repo(tmp_path: Path, readme: str = "", doc: str = "",
         patch: str = "") -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "patches").mkdir()
    (tmp_path / "README.md").write_text(readme)
    (tmp_path / "docs" / "limits.md").write_text(doc)
    (tmp_path / "patches" / "0001-x.patch").write_text(patch)
    return tmp_path


def problems(root: Path):
    return quotes.problems(root, lambda rev: CODES.get(rev, "unknown"))


def test_clean_records_of_the_code_now_pass(tmp_path):
    now = rec(tmp_path, "bench-1.json", "now1")
    old = rec(tmp_path, "bench-0.json", "old1")
    root = repo(tmp_path, f"Ratio 0.8 (`{now}`).\n",
                f"On an earlier revision it was 0.7\n({old}).\n",
                f"Subject\n\n0.8x, {now}.\n---\n")
    assert problems(root) == []


def test_a_record_of_a_dirty_tree_is_refused(tmp_path):
    dirty = rec(tmp_path, "bench-2.json", "now1", dirty=True)
    root = repo(tmp_path, doc=f"Ratio 0.8 ({dirty}).\n")
    assert problems(root) == [
        f"docs/limits.md:1: {dirty}: made from a tree with uncommitted "
        "changes (or one that does not say)"]


def test_the_series_text_cites_only_the_code_it_is(tmp_path):
    old = rec(tmp_path, "bench-0.json", "old1")
    # even a changelog that says so: its figures must be its own code's
    root = repo(tmp_path, patch=f"Subject\n\nAn earlier revision: 0.7,\n"
                f"{old}.\n")
    assert problems(root) == [
        f"patches/0001-x.patch:4: {old}: measured patches/ of old1, whose "
        "code is not the series' now"]


def test_docs_say_when_a_record_is_of_other_code(tmp_path):
    old = rec(tmp_path, "bench-0.json", "old1")
    root = repo(tmp_path, doc=f"First.\n\nIt was 0.7 ({old}).\n")
    [problem] = problems(root)
    assert problem.startswith(f"docs/limits.md:3: {old}: measured patches/"
                              " of old1, other code than now")


def test_the_status_block_names_its_records_revisions(tmp_path):
    old = rec(tmp_path, "buildtest-0.json", "old1")
    dirty = rec(tmp_path, "check-0.json", "now1", dirty=True)
    root = repo(tmp_path, "<!-- status:begin -->\n| a | `" + old +
                "` |\n| b | `" + dirty + "` |\n<!-- status:end -->\n")
    # other code is said by the block's own rows; dirty is still refused
    assert [p.split(": ")[1] for p in problems(root)] == [dirty]


@pytest.mark.parametrize("data", [{"kind": "x", "ok": True},
                                  {"repo": {"head": "now1"}}])
def test_a_record_that_does_not_say_it_was_clean_is_refused(tmp_path, data):
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "x.json").write_text(json.dumps(data))
    root = repo(tmp_path, doc="See records/x.json.\n")
    assert "uncommitted" in problems(root)[0]


def test_a_missing_record_is_named(tmp_path):
    root = repo(tmp_path, doc="See records/gone.json.\n")
    assert problems(root) == ["docs/limits.md:1: records/gone.json: no "
                              "such record"]


def test_without_history_the_check_cannot_tell_and_says_so(tmp_path):
    now = rec(tmp_path, "bench-1.json", "now1")
    root = repo(tmp_path, doc=f"Ratio ({now}).\n")
    with pytest.raises(quotes.InfraError, match="no git history"):
        quotes.problems(root, lambda rev: "unknown")


def test_a_form_feed_is_text_not_a_paragraph_break(tmp_path):
    now = rec(tmp_path, "bench-1.json", "now1")
    root = repo(tmp_path, doc=f"A page\f\nRatio ({now}).\n")
    assert problems(root) == []
