"""Installs said before they happen; backports from the machine's own
mirror."""
from pathlib import Path

import pytest

from bringuplab.host import apt_sources, packages
from bringuplab.errors import InfraError

LOCAL = "http://apt.lab.example:3142/debian"


def etc_apt(tmp_path, sources_list="", **parts):
    (tmp_path / "sources.list").write_text(sources_list)
    part = tmp_path / "sources.list.d"
    part.mkdir()
    for name, text in parts.items():
        (part / name.replace("_", ".")).write_text(text)
    return tmp_path


def test_one_line_sources_give_the_bookworm_mirror(tmp_path):
    etc = etc_apt(tmp_path, sources_list=(
        "# deb http://commented.example/debian bookworm main\n"
        "deb-src http://src.example/debian bookworm main\n"
        "deb http://security.debian.org/debian-security bookworm-security "
        "main\n"
        f"deb [arch=amd64 signed-by=/k.gpg] {LOCAL} bookworm main contrib\n"))
    found = apt_sources.mirror_for(apt_sources.read_all(etc),
                                   "bookworm-backports")
    assert found is not None
    assert (found.uri, found.signed_by) == (LOCAL, "/k.gpg")
    text = apt_sources.deb822(found, "bookworm-backports")
    assert f"URIs: {LOCAL}\n" in text and "Suites: bookworm-backports\n" \
        in text and "Signed-By: /k.gpg\n" in text


def test_deb822_sources_skip_disabled_and_the_labs_own(tmp_path):
    etc = etc_apt(tmp_path, **{
        "bringup-lab-backports_sources": (
            "Types: deb\nURIs: http://stale.example/debian\n"
            "Suites: bookworm bookworm-backports\nComponents: main\n"),
        "debian_sources": (
            "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\n"
            "Components: main\nEnabled: no\n\n"
            "Types: deb deb-src\n# a comment\nURIs: http://proxy:8080/debian\n"
            "Suites: bookworm bookworm-updates\nComponents: main\n"
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"),
        "other_list_disabled": f"deb {LOCAL} bookworm main\n"})
    sources = apt_sources.read_all(
        etc, skip=("bringup-lab-backports.sources",))
    found = apt_sources.mirror_for(sources, "bookworm-backports")
    assert found is not None and found.uri == "http://proxy:8080/debian"
    assert found.signed_by == \
        "/usr/share/keyrings/debian-archive-keyring.gpg"


def test_no_bookworm_mirror_is_an_infrastructure_error(tmp_path):
    etc = etc_apt(tmp_path, sources_list=(
        "deb http://deb.debian.org/debian trixie main\n"))
    with pytest.raises(InfraError, match="no apt source"):
        packages.backports_source(etc)
    (etc / "sources.list").write_text(f"deb {LOCAL} bookworm main\n")
    text, mirror = packages.backports_source(etc)
    assert mirror == LOCAL and "deb.debian.org" not in text


class Recorded(type(Path())):  # type: ignore[misc]
    """A path whose writes are logged in EVENTS with what stderr said
    before them."""
    EVENTS: list = []
    CAPSYS = None

    def write_text(self, data, *args, **kwargs):
        self.EVENTS.append(("write", str(self),
                            self.CAPSYS.readouterr().err))
        return super().write_text(data, *args, **kwargs)


def test_installs_are_announced_before_anything_changes(monkeypatch,
                                                        tmp_path, capsys):
    Recorded.EVENTS, Recorded.CAPSYS = [], capsys
    events = Recorded.EVENTS
    source = Recorded(tmp_path / "lab.sources")
    monkeypatch.setattr(packages, "BACKPORTS_SOURCE", source)
    monkeypatch.setattr(packages, "installed", lambda pkg: pkg != "ccache")
    monkeypatch.setattr(packages, "qemu_version", lambda: (7, 2))
    monkeypatch.setattr(packages, "backports_source",
                        lambda: ("Types: deb\n", LOCAL))
    monkeypatch.setattr(packages.shutil, "which", lambda exe: "/usr/bin/x")
    monkeypatch.setattr(packages.os, "geteuid", lambda: 0)
    monkeypatch.setattr(packages, "_apt", lambda args: events.append(
        ("apt", " ".join(args), capsys.readouterr().err)))
    with pytest.raises(InfraError, match="8.1 is needed"):
        packages.ensure(["kernel", "boot"])
    assert [e[:2] for e in events] == [
        ("write", str(source)), ("apt", "update -qq"),
        ("apt", "install -y -qq ccache"),
        ("apt", "install -y -qq -t bookworm-backports qemu-system-x86")]
    said = events[0][2]
    # everything that will be installed, and the source, said first
    assert "ccache" in said and "qemu-system-x86 from bookworm-backports" \
        in said and "7.2 found" in said and str(source) in said \
        and LOCAL in said
    assert not any(e[2] for e in events[1:])


def test_nothing_missing_changes_and_says_nothing(monkeypatch, capsys):
    monkeypatch.setattr(packages, "installed", lambda pkg: True)
    monkeypatch.setattr(packages, "qemu_version", lambda: (8, 2))

    def apt(args):
        raise AssertionError("apt-get run with nothing missing")
    monkeypatch.setattr(packages, "_apt", apt)
    packages.ensure(list(packages.NEEDS))
    assert capsys.readouterr().err == ""
