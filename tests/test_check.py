"""make check's own guards."""
from pathlib import Path

from bringuplab.build import kernel
from bringuplab.runs import check

# The lines of a System.map that matter here (addresses of the x86_64
# guest kernel's layout: data below __bss_start, .bss above).
SYSTEM_MAP = """\
ffffffff82a0b000 D smpboot_control
ffffffff82c00000 B __bss_start
ffffffff82c01000 b initcall_debug_enabled
ffffffff83200000 B __bss_stop
"""
IN_BSS = SYSTEM_MAP.replace("ffffffff82a0b000 D smpboot_control",
                            "ffffffff82c0a000 b smpboot_control")


def test_early_symbols_found_outside_bss():
    assert check.early_symbols_in_bss(SYSTEM_MAP) == (["smpboot_control"], [])


def test_an_early_symbol_in_bss_is_named():
    assert check.early_symbols_in_bss(IN_BSS) == (["smpboot_control"],
                                                  ["smpboot_control"])
    # at __bss_start itself, too
    at = SYSTEM_MAP.replace("ffffffff82a0b000", "ffffffff82c00000")
    assert check.early_symbols_in_bss(at)[1] == ["smpboot_control"]
    # with no __bss_start, nothing can be shown outside it
    none = SYSTEM_MAP.replace("B __bss_start", "B __bss_begins")
    assert check.early_symbols_in_bss(none)[1] == ["smpboot_control"]


def out_dir(tmp_path: Path, system_map: str) -> kernel.Kernel:
    """A kernel build's out dir with its System.map; its Kernel, as
    kernel.build() returns it."""
    out = tmp_path / "out-guest"
    image = out / "arch" / "x86" / "boot" / "bzImage"
    image.parent.mkdir(parents=True)
    image.write_bytes(b"")
    (out / "System.map").write_text(system_map)
    return kernel.built_in(out, "guest")


def guard(tmp_path: Path, system_map: str) -> check.Tally:
    tally = check.Tally()
    check.early_symbols_outside_bss(tally, out_dir(tmp_path, system_map))
    return tally


def test_the_guard_passes_a_build_with_them_outside_bss(tmp_path, capsys):
    tally = guard(tmp_path, SYSTEM_MAP)
    assert (tally.passed, tally.failed) == (1, 0)
    assert "PASS boot CPU's early variables outside .bss (out-guest)" in \
        capsys.readouterr().out


def test_the_guard_fails_a_build_with_one_in_bss(tmp_path, capsys):
    """The boot CPU of a KASAN kernel took the AP path and faulted
    before any output: smpboot_control read from an uncleared .bss."""
    tally = guard(tmp_path, IN_BSS)
    assert (tally.passed, tally.failed) == (0, 1)
    assert "in .bss: smpboot_control" in capsys.readouterr().out


def test_the_guard_fails_a_build_without_them(tmp_path, capsys):
    tally = guard(tmp_path, SYSTEM_MAP.replace("smpboot_control", "other"))
    assert tally.failed == 1
    assert "none of smpboot_control found" in capsys.readouterr().out
