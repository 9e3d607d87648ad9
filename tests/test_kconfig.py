"""Config fragments: parsing and the 'did every option stick' check."""
from pathlib import Path

from bringuplab.build import kconfig

KCONFIG = Path(__file__).resolve().parents[1] / "kconfig"


def test_parse_set_and_unset():
    opts = kconfig.parse("CONFIG_SMP=y\n# CONFIG_KASAN is not set\n"
                         "CONFIG_NR_CPUS=512\n# comment\n")
    assert opts == {"CONFIG_SMP": "y", "CONFIG_KASAN": "n",
                    "CONFIG_NR_CPUS": "512"}


def test_mismatches_names_what_did_not_stick():
    want = {"CONFIG_SMP": "y", "CONFIG_NR_CPUS": "512", "CONFIG_FOO": "n"}
    dotconfig = "CONFIG_SMP=y\nCONFIG_NR_CPUS=64\nCONFIG_FOO=y\n"
    bad = kconfig.mismatches(want, dotconfig)
    assert bad == ["CONFIG_NR_CPUS: want 512, got 64",
                   "CONFIG_FOO: want n, got y"]


def test_missing_option_counts_as_n():
    assert kconfig.mismatches({"CONFIG_X": "y"}, "") == \
        ["CONFIG_X: want y, got n"]


def test_guest_fragment_requests_what_the_lab_needs():
    opts = kconfig.parse((KCONFIG / "qemu-guest.config").read_text())
    for opt in ("CONFIG_SMP", "CONFIG_HOTPLUG_CPU", "CONFIG_X86_X2APIC",
                "CONFIG_CPU_HOTPLUG_STATE_CONTROL", "CONFIG_ACPI",
                "CONFIG_NUMA", "CONFIG_NO_HZ_IDLE", "CONFIG_PRINTK_TIME",
                "CONFIG_SERIAL_8250_CONSOLE", "CONFIG_BLK_DEV_INITRD",
                "CONFIG_DEVTMPFS", "CONFIG_KEXEC", "CONFIG_SUSPEND"):
        assert opts.get(opt) == "y", opt
    assert int(opts["CONFIG_NR_CPUS"]) >= 512


def test_every_flavour_has_its_fragments():
    for name, flav in kconfig.FLAVOURS.items():
        for frag in flav.fragments + flav.verify:
            assert (KCONFIG / f"{frag}.config").is_file(), name


def test_kasan_flavour_swaps_slob_for_slub_which_kasan_needs():
    opts = kconfig.expected(kconfig.flavour("kasan"))
    assert opts["CONFIG_KASAN"] == "y" and opts["CONFIG_SLUB"] == "y"
    assert opts["CONFIG_SLOB"] == "n"


def test_the_scale_kernels_allocate_with_slub_as_6_12_and_debian_do():
    # the scale suite sets 6.1 kernels against 6.12, which has no SLOB
    for name in ("scale", "scale-hz100"):
        opts = kconfig.expected(kconfig.flavour(name))
        assert opts["CONFIG_SLUB"] == "y" and opts["CONFIG_SLOB"] == "n"
        assert opts["CONFIG_NR_CPUS"] == "8192"


def test_a_debian_based_flavour_starts_from_debians_config(monkeypatch,
                                                           tmp_path):
    calls = []
    monkeypatch.setattr(kconfig, "run", lambda argv, **kw: calls.append(
        argv))
    monkeypatch.setattr(kconfig, "debian_config",
                        lambda name: f"# from {name}\n".encode())
    monkeypatch.setattr(kconfig, "mismatches", lambda want, text: [])
    kconfig.configure(tmp_path, tmp_path / "out", "cloud")
    assert not any("tinyconfig" in argv for argv in calls)
    assert (tmp_path / "out" / ".config").read_text() == \
        "# from config.amd64_none_cloud-amd64.xz\n"
    assert any("merge_config.sh" in argv[0] for argv in calls)
    (tmp_path / "guest").mkdir()
    (tmp_path / "guest" / ".config").write_text("")
    kconfig.configure(tmp_path, tmp_path / "guest", "guest")
    assert any("tinyconfig" in argv for argv in calls)


def test_a_tree_without_the_lab_overlay_is_not_asked_for_its_options():
    debug = kconfig.flavour("debug")
    assert kconfig.expected(debug)["CONFIG_X86_DEBUG_BRINGUP_FAULTS"] == "y"
    bare = kconfig.expected(debug, overlay=False)
    assert "CONFIG_X86_DEBUG_BRINGUP_FAULTS" not in bare
    assert bare["CONFIG_PROVE_LOCKING"] == "y"


def test_the_overlay_options_are_read_from_its_patches(tmp_path):
    assert kconfig.overlay_options() == ["CONFIG_X86_DEBUG_BRINGUP_FAULTS"]
    (tmp_path / "0001-a.patch").write_text(
        "+config LAB_A\n+\tbool \"a\"\n"
        "+\n config CONTEXT_AFTER_AN_ADDED_BLANK\n-config REMOVED\n")
    (tmp_path / "0002-b.patch").write_text("+menuconfig LAB_B\n")
    (tmp_path / "notes.txt").write_text("+config NOT_A_PATCH\n")
    assert kconfig.overlay_options(tmp_path) == ["CONFIG_LAB_A",
                                                 "CONFIG_LAB_B"]
    assert kconfig.overlay_options(tmp_path / "none") == []
