"""The Kernel a build returns, and the one a --kernel path names."""
from pathlib import Path

from bringuplab.build import kernel
from bringuplab.guest import boot
from bringuplab.paths import out_dir


def test_a_build_names_its_config_and_system_map(tmp_path):
    kern = kernel.built_in(tmp_path / "out-debug", "debug", "abc123")
    assert kern.image == tmp_path / "out-debug/arch/x86/boot/bzImage"
    assert kern.config == tmp_path / "out-debug/.config"
    assert kern.system_map == tmp_path / "out-debug/System.map"
    assert (kern.flavour, kern.revision) == ("debug", "abc123")


def test_an_image_where_a_build_puts_it_has_the_build_beside_it(tmp_path):
    image = tmp_path / "out-kasan" / "arch" / "x86" / "boot" / "bzImage"
    kern = kernel.of_image(image)
    assert kern == kernel.built_in(tmp_path / "out-kasan", "kasan")
    # its .config says NR_CPUS
    assert boot.kernel_nr_cpus(kern) == 512
    kern.out.mkdir(parents=True)
    kern.config.write_text("CONFIG_SMP=y\nCONFIG_NR_CPUS=64\n")
    assert boot.kernel_nr_cpus(kern) == 64


def test_an_image_elsewhere_has_no_build(tmp_path):
    kern = kernel.of_image(tmp_path / "vmlinuz-6.1")
    assert kern.out == tmp_path and kern.flavour == ""
    assert boot.kernel_nr_cpus(kern) == 512


def test_without_kernel_option_the_guest_build():
    assert kernel.given(None) == kernel.built_in(out_dir("guest"), "guest")
    assert kernel.given("x/bz").image == Path("x/bz")


def test_the_revision_of_a_tree_without_git_is_unknown(tmp_path):
    assert kernel.tree_revision(tmp_path) == ""
    assert len(kernel.tree_revision(Path(__file__).parent)) == 40
