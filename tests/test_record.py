"""Records: what they say about the run, saved and read back; the
result files from before records read as records."""
import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from bringuplab.report import record
from bringuplab.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
CPUINFO = ("processor\t: 0\nmodel name\t: AMD EPYC 7B13\n"
           "processor\t: 1\nmodel name\t: AMD EPYC 7B13\n")
OS_RELEASE = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n'


def test_host_comes_from_the_machine_not_from_the_code():
    host = record.host(CPUINFO, OS_RELEASE)
    assert host.cpu_model == "AMD EPYC 7B13"
    assert host.os == "Debian GNU/Linux 12 (bookworm)"
    assert host.cpus >= 1
    assert host.describe().endswith("x AMD EPYC 7B13, Debian GNU/Linux 12 "
                                    "(bookworm)")


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args],
                          capture_output=True, text=True,
                          check=True).stdout.strip()


def test_provenance_names_the_revisions_tools_and_configs(tmp_path):
    config = tmp_path / ".config"
    config.write_text("CONFIG_SMP=y\n")
    prov = record.provenance("2026-12-01T10:00:00Z",
                             {"guest": config, "gone": tmp_path / "x"},
                             argv=["bringup", "bench"])
    assert prov.lab_revision == git("rev-parse", "HEAD")
    assert prov.patches_revision == git("log", "-1", "--format=%H", "--",
                                        "patches")
    assert prov.argv == ["bringup", "bench"]
    assert prov.configs == {
        "gone": record.UNKNOWN,
        "guest": hashlib.sha256(b"CONFIG_SMP=y\n").hexdigest()}
    assert prov.started == "2026-12-01T10:00:00Z"
    assert prov.ended >= prov.started
    assert prov.compiler and prov.qemu and prov.host.cpus >= 1


def test_a_record_is_saved_in_results_and_read_back(tmp_path, monkeypatch):
    config = tmp_path / ".config"
    config.write_text("CONFIG_SMP=y\n")
    monkeypatch.setattr(record, "BUILT", {"guest-check": config})
    rec = record.make("check", False, {"passed": 1, "failed": 1},
                      record.now())
    assert list(rec.provenance.configs) == ["guest-check"]
    path = record.save(rec, tmp_path / "results")
    again = record.save(rec, tmp_path / "results")
    assert path.parent == tmp_path / "results" and path != again
    assert path.name.startswith("check-") and path.suffix == ".json"
    data = json.loads(path.read_text())
    assert data["kind"] == "check" and data["ok"] is False
    assert data["provenance"]["host"]["cpus"] >= 1
    back = record.load(path)
    assert back == rec and back.source == str(path)


@pytest.mark.parametrize("name,kind", [
    ("quick.json", "bench"), ("quick-20261201-0512.json", "bench"),
    ("compare-window1-20261202-1811.json", "compare"),
    ("compare-hotplug-lock-20261202-1745.json", "compare"),
    ("states.json", "states")])
def test_result_files_from_before_records_read_as_records(name, kind):
    rec = record.load(ROOT / "bench" / name)
    assert rec.kind == kind and rec.provenance is None


@pytest.mark.parametrize("text", ["[]", '{"x": 1}', "not json",
                                  '{"kind": "dance", "results": {}}'])
def test_what_is_not_a_record_is_a_usage_error(tmp_path, text):
    path = tmp_path / "x.json"
    path.write_text(text)
    with pytest.raises(UsageError):
        record.load(path)
    with pytest.raises(UsageError, match="cannot read"):
        record.load(tmp_path / "missing.json")


def test_results_are_ignored_by_git():
    assert git("check-ignore", "results/bench-x.json") == \
        "results/bench-x.json"


def test_a_record_that_cannot_be_written_is_an_infra_error(tmp_path):
    from bringuplab.errors import InfraError
    blocker = tmp_path / "results"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(InfraError, match="cannot write the record"):
        record.save(record.Record("check", True, {}), blocker)


MAIL = """From 1 Mon Sep 17 00:00:00 2001
Subject: [PATCH 01/14] x86/foo: Do a thing

Why and what, with a number: 42 ms.
---
 arch/x86/foo.c | 1 +

diff --git a/arch/x86/foo.c b/arch/x86/foo.c
--- a/arch/x86/foo.c
+++ b/arch/x86/foo.c
@@ -1 +1,2 @@
 int a;
+int b;
-- 
2.39.5
"""


def commit_patches(repo: Path, files: dict, message: str) -> str:
    for name, text in files.items():
        (repo / "patches" / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / "patches" / name).write_text(text)
    run = ["git", "-C", str(repo), "-c", "user.name=t",
           "-c", "user.email=t@t"]
    subprocess.run(run + ["add", "-A"], check=True)
    subprocess.run(run + ["commit", "-qm", message], check=True)
    return subprocess.run(run + ["rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def test_the_series_code_changes_with_the_diffs_only(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    first = commit_patches(tmp_path, {
        "0000-cover-letter.patch": "Numbers: 1\n",
        "0001-x86-foo-Do-a-thing.patch": MAIL,
        "calibration/0001-x.patch": MAIL}, "v3")
    # A new changelog, subject, file name and cover letter: same code
    (tmp_path / "patches" / "0001-x86-foo-Do-a-thing.patch").unlink()
    words = commit_patches(tmp_path, {
        "0000-cover-letter.patch": "Numbers: 2\n",
        "0001-x86-foo-Do-it.patch": MAIL.replace("42 ms", "40 ms")
        .replace("Do a thing", "Do it")}, "changelog")
    code = commit_patches(tmp_path, {
        "0001-x86-foo-Do-it.patch": MAIL.replace("+int b;", "+int c;")},
        "code")
    moved = commit_patches(tmp_path, {
        "calibration/0001-x.patch": MAIL.replace("+int b;", "+int c;")},
        "split-out series")
    digests = [record.series_code(rev, tmp_path)
               for rev in (first, words, code, moved)]
    assert digests[0] == digests[1] != digests[2] != digests[3]
    assert record.UNKNOWN not in digests
    assert record.series_code("no-such-rev", tmp_path) == record.UNKNOWN


def test_the_code_of_a_mail_is_its_diff():
    code = record.patch_code(MAIL)
    assert code.startswith("diff --git a/arch/x86/foo.c")
    assert code.endswith("+int b;")
    assert "42 ms" not in code and "2.39.5" not in code
