"""`make check`'s items as JUnit XML, the format CI systems read: one
test case per item (each boot, each patch's checkpatch, each build and
guard), a failure for a failed item, an error for one the lab's
machinery could not do (check.py's `infra`). Written next to the JSON
record, from the record alone."""
import re
from pathlib import Path
from xml.etree import ElementTree as ET

from bringuplab.report.record import Record

# What XML 1.0 cannot hold, which a console excerpt may carry
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
# The first word of an item's name says what it is: its test class.
CLASSES = ("boot", "checkpatch", "git", "kernel", "unit", "shellcheck")


def classname(name: str) -> str:
    word = name.split()[0] if name.split() else ""
    return f"check.{word}" if word in CLASSES else "check"


def element(rec: Record) -> ET.Element:
    """The <testsuites> of a check record."""
    steps = rec.results.get("steps", [])
    failures = sum(not s["ok"] and not s.get("infra") for s in steps)
    errors = sum(bool(not s["ok"] and s.get("infra")) for s in steps)
    started = rec.provenance.started if rec.provenance else ""
    suites = ET.Element("testsuites", name="make check")
    suite = ET.SubElement(suites, "testsuite", {
        "name": "make check", "tests": str(len(steps)),
        "failures": str(failures), "errors": str(errors),
        "timestamp": started})
    if rec.provenance:
        props = ET.SubElement(suite, "properties")
        for key in ("lab_revision", "patches_revision", "qemu", "compiler"):
            ET.SubElement(props, "property", name=key,
                          value=str(getattr(rec.provenance, key)))
    for step in steps:
        case = ET.SubElement(suite, "testcase", name=step["name"],
                             classname=classname(step["name"]))
        if step["ok"]:
            continue
        tag = "error" if step.get("infra") else "failure"
        detail = NOT_XML.sub("?", step["detail"])
        bad = ET.SubElement(case, tag, message=detail[:200] or tag)
        bad.text = detail
    return suites


def write(rec: Record, path: Path) -> Path:
    tree = ET.ElementTree(element(rec))
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return path
