"""Infrastructure errors are counted apart from failures: a run whose
only trouble is a machine QEMU would not start exits 3, one with a
failed boot exits 1 (errors.exit_status), for check, matrix and soak."""
from pathlib import Path
from typing import List

import pytest

from bringuplab import cli, errors
from bringuplab.build import kernel
from bringuplab.guest import boot, initramfs
from bringuplab.host import packages
from bringuplab.report import record
from bringuplab.runs import check, matrix
from bringuplab.verdict import result
from bringuplab.errors import QemuRefused
from bringuplab.guest.machinespec import MachineSpec
from reallogs import LOGS, good_1cpu


@pytest.mark.parametrize("failed,infra,code", [
    (0, 0, 0), (1, 0, 1), (0, 1, 3), (2, 5, 1)])
def test_exit_status(failed, infra, code):
    assert errors.exit_status(failed, infra) == code


@pytest.mark.parametrize("ok,results,code", [
    (True, {"failed": 0, "infra": 0}, 0),
    (False, {"failed": 0, "infra": 2}, 3),
    (False, {"failed": 1, "infra": 2}, 1),
    # records from before the count, or without counts, fail
    (False, {"failed": 3}, 1),
    (False, {}, 1)])
def test_status_of_a_record(ok, results, code):
    assert record.status_of(record.Record("soak", ok, results)) == code


def fake_boots(monkeypatch, tmp_path: Path) -> None:
    """boot.run judges a real log per entry by its name: "ok" a good
    1-CPU boot, "panic" a kernel that found no init, "refused" a
    machine QEMU would not start."""
    logs = {"ok": good_1cpu(), "panic": (LOGS / "panic-no-init.log")
            .read_text()}
    refused = tmp_path / "refused.log"
    refused.write_text("qemu-system-x86_64: -smp 600: Invalid SMP CPUs\n")

    def fake_run(spec, quiet=False):
        kind = spec.label.split("-")[0]
        if kind == "refused":
            raise QemuRefused("QEMU refused the machine: qemu-system-x86_64:"
                              f" -smp 600 (log: {refused})", str(refused))
        log = tmp_path / f"{spec.label}.log"
        log.write_text(logs[kind])
        return result.of_log(logs[kind], spec.expectations(), str(log))
    monkeypatch.setattr(boot, "run", fake_run)
    monkeypatch.setattr(boot, "kernel_nr_cpus", lambda kernel: 512)


def entries(*kinds: str) -> List[matrix.Entry]:
    return [matrix.Entry(f"{kind}-{i}", MachineSpec(1))
            for i, kind in enumerate(kinds)]


@pytest.mark.parametrize("kinds,code", [
    (("ok", "ok"), 0), (("ok", "refused"), 3), (("panic", "refused"), 1),
    (("ok", "panic"), 1)])
def test_check_exits_3_for_a_refused_machine_and_1_for_a_failed_boot(
        monkeypatch, tmp_path, capsys, kinds, code):
    """check's boots, the rest of check stubbed: its steps before the
    boots, the kernel build (an out dir as kernel.build leaves it)."""
    fake_boots(monkeypatch, tmp_path)
    out = tmp_path / "out-guest"
    (out / "arch/x86/boot").mkdir(parents=True)
    (out / "arch/x86/boot/bzImage").write_bytes(b"")
    (out / "System.map").write_text("ffffffff82a0b000 D smpboot_control\n"
                                    "ffffffff82c00000 B __bss_start\n")
    monkeypatch.setattr(kernel, "build",
                        lambda *a, **k: kernel.built_in(out, "guest"))
    monkeypatch.setattr(initramfs, "build", lambda *a, **k: tmp_path)
    monkeypatch.setattr(matrix, "entries", lambda name: entries(*kinds))
    for step in ("unit_tests", "shellcheck", "quoted_figures"):
        monkeypatch.setattr(check, step, lambda tally: None)
    monkeypatch.setattr(check, "patches", lambda tally: True)
    monkeypatch.setattr(check.tree, "is_tree", lambda: True)
    # the base kernel's boots: no bringup mode line to expect
    monkeypatch.setattr(check.tree, "series_files", lambda: [])
    monkeypatch.setattr(packages, "ensure", lambda names: None)
    monkeypatch.setattr(check, "CONFIGS", (("guest", "check"),))
    monkeypatch.setattr(check, "AFTER_MATRIX", {})
    monkeypatch.setattr(record, "RESULTS", tmp_path / "results")
    assert cli.main(["check"]) == code
    text = capsys.readouterr().out
    if "refused" in kinds:
        assert "check: INFRA boot refused-1: QEMU refused the machine" \
            in text
        assert "1 not done (infrastructure)" in text
    saved = record.load(next((tmp_path / "results").glob("check-*.json")))
    assert record.status_of(saved) == code
    # the JUnit XML beside it, as a CI system reads it (Debian's
    # python3-junitparser, which the lab installs for make check)
    from junitparser import Error, Failure, JUnitXml
    xml = JUnitXml.fromfile(str(next((tmp_path / "results")
                                     .glob("check-*.xml"))))
    [suite] = list(xml)
    cases = {case.name: case for case in suite}
    assert len(cases) == len(saved.results["steps"]) == suite.tests
    for i, kind in enumerate(kinds):
        result = cases[f"boot {kind}-{i}"].result
        want = {"ok": [], "panic": [Failure], "refused": [Error]}[kind]
        assert [type(r) for r in result] == want
    assert (suite.failures, suite.errors) == (
        sum(k == "panic" for k in kinds), sum(k == "refused" for k in kinds))


def test_matrix_counts_a_refused_machine_apart(monkeypatch, tmp_path):
    fake_boots(monkeypatch, tmp_path)
    rows = matrix.run_entries(entries("ok", "refused", "panic", "refused"),
                              kernel.of_image(Path("bzImage")), None, False)
    assert matrix.counts(rows) == (1, 2)
    assert matrix.counts(rows[:2]) == (0, 1)


def test_a_series_that_does_not_apply_fails_check_not_its_machinery(
        monkeypatch, tmp_path, capsys):
    """git am failing is the series' failure (exit 1), even where the
    tree is made for the first time; a base that cannot be fetched is
    the lab's (exit 3)."""
    from bringuplab.build import tree
    for step in ("unit_tests", "shellcheck", "quoted_figures"):
        monkeypatch.setattr(check, step, lambda tally: None)
    monkeypatch.setattr(packages, "ensure", lambda names: None)
    monkeypatch.setattr(record, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(tree, "is_tree", lambda: False)

    def does_not_apply(reset=False):
        raise errors.SeriesDoesNotApply("series does not apply: Patch "
                                        "failed at 0003")
    monkeypatch.setattr(tree, "create", does_not_apply)
    assert cli.main(["check"]) == 1
    assert "check: FAIL tree build/linux" in capsys.readouterr().out

    def no_base(reset=False):
        raise errors.InfraError("base tarball is missing")
    monkeypatch.setattr(tree, "create", no_base)
    assert cli.main(["check"]) == 3
    assert "check: INFRA tree build/linux" in capsys.readouterr().out


def test_junit_xml_holds_no_control_character(tmp_path):
    from xml.etree import ElementTree as ET
    from bringuplab.report import junit
    rec = record.Record("check", False, {"steps": [
        {"name": "boot x", "ok": False, "detail": "panic\x1b[0m\x07 here",
         "infra": False}]})
    path = junit.write(rec, tmp_path / "check.xml")
    [case] = ET.parse(path).getroot().iter("testcase")
    assert case.find("failure").text == "panic?[0m? here"
