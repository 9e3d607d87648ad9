"""buildtest: warnings of base and series compared as the kernel test
robot would (line numbers left out), the targets, and mocked runs."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bringuplab.build import kbuild, kconfig
from bringuplab.runs import buildtest
from bringuplab.build.kbuild import Diag
from bringuplab.errors import LabError

BRINGUP = Path(__file__).resolve().parents[1] / "tools" / "bringup"

TREE = "/work/lab/build/buildtest/series/linux"
OUT = "/work/lab/build/buildtest/series/out-x86_64-w1"
BASE_TREE = "/work/lab/build/buildtest/base/linux"
BASE_OUT = "/work/lab/build/buildtest/base/out-x86_64-w1"

# W=1 and C=1 output of a guest build of kernel/cpu.o and
# arch/x86/kernel/smpboot.o, as make prints it with O= outside the tree
# (absolute paths) and with ccache's relative ones.
SERIES_LOG = f"""\
  CC      kernel/cpu.o
{TREE}/kernel/cpu.c:1234:5: warning: no previous prototype for 'cpuhp_ap_report_alive' [-Wmissing-prototypes]
 1234 | int cpuhp_ap_report_alive(void)
      |     ^~~~~~~~~~~~~~~~~~~~~
  CHECK   {TREE}/kernel/cpu.c
{TREE}/kernel/cpu.c:1510:14: warning: symbol 'cpuhp_parallel_window' was not declared. Should it be static?
  CC      arch/x86/kernel/smpboot.o
../linux/arch/x86/kernel/smpboot.c: In function 'do_boot_cpu':
../linux/arch/x86/kernel/smpboot.c:1105:13: warning: variable 'boot_error' set but not used [-Wunused-but-set-variable]
 1105 |         int boot_error = 0;
      |             ^~~~~~~~~~
../linux/arch/x86/kernel/smpboot.c:1120:1: note: declared here
../linux/arch/x86/kernel/smpboot.c: At top level:
../linux/arch/x86/kernel/smpboot.c:1301:6: warning: no previous prototype for 'arch_cpuhp_sync_state_poll' [-Wmissing-prototypes]
"""

BASE_LOG = f"""\
  CC      kernel/cpu.o
{BASE_TREE}/kernel/cpu.c:1187:5: warning: no previous prototype for 'cpuhp_ap_report_alive' [-Wmissing-prototypes]
 1187 | int cpuhp_ap_report_alive(void)
      |     ^~~~~~~~~~~~~~~~~~~~~
  CC      arch/x86/kernel/smpboot.o
../linux/arch/x86/kernel/smpboot.c: In function 'do_boot_cpu':
../linux/arch/x86/kernel/smpboot.c:1059:13: warning: variable 'boot_error' set but not used [-Wunused-but-set-variable]
"""


def parse(text, tree=TREE, out=OUT, cross=""):
    return kbuild.parse_diagnostics(text, tree, out, cross)


def test_gcc_warning_loses_its_line_and_tree():
    diag, = parse(f"{TREE}/kernel/cpu.c:1234:5: warning: no previous "
                  "prototype for 'foo' [-Wmissing-prototypes]\n")
    assert diag == Diag("kernel/cpu.c", 1234, 5, "warning",
                        "no previous prototype for 'foo' "
                        "[-Wmissing-prototypes]")
    assert diag.key == ("kernel/cpu.c", "", "warning",
                        "no previous prototype for 'foo' "
                        "[-Wmissing-prototypes]")


def test_relative_source_path_from_the_object_dir():
    diag, = parse("../linux/kernel/smpboot.c:88:1: warning: x [-Wfoo]\n")
    assert diag.file == "kernel/smpboot.c"
    diag, = parse("./include/generated/autoconf.h:3:9: warning: y\n")
    assert diag.file == "include/generated/autoconf.h"


def test_function_context_kept_and_reset():
    diags = parse(SERIES_LOG)
    assert [(d.file, d.line, d.function) for d in diags] == [
        ("kernel/cpu.c", 1234, ""),
        ("kernel/cpu.c", 1510, ""),
        ("arch/x86/kernel/smpboot.c", 1105, "do_boot_cpu"),
        ("arch/x86/kernel/smpboot.c", 1301, "")]
    assert diags[1].text.startswith("symbol 'cpuhp_parallel_window' was")


def test_context_does_not_leak_into_the_next_compiler_run():
    diags = parse("../linux/kernel/cpu.c: In function 'a':\n"
                  "../linux/kernel/cpu.c:10:5: warning: unused variable "
                  "'ret' [-Wunused-variable]\n"
                  "  CC      kernel/cpu.o\n"
                  "../linux/kernel/cpu.c:40:1: warning: no previous "
                  "prototype for 'b' [-Wmissing-prototypes]\n")
    assert [d.function for d in diags] == ["a", ""]


def test_notes_and_excerpts_are_not_warnings():
    assert parse(" 1105 |         int boot_error = 0;\n"
                 "      |             ^~~~~~~~~~\n"
                 "kernel/cpu.c:12:3: note: in expansion of macro 'X'\n"
                 "In file included from ../linux/kernel/cpu.c:17:\n"
                 "  CC      kernel/cpu.o\n"
                 "make[2]: *** [scripts/Makefile.build:250: kernel/cpu.o] "
                 "Error 1\n") == []


def test_unicode_quotes_of_a_utf8_locale_match_ascii_ones():
    utf8, = parse("kernel/cpu.c:9:5: warning: no previous prototype for "
                  "\u2018foo\u2019 [-Wmissing-prototypes]\n")
    ascii_, = parse("kernel/cpu.c:9:5: warning: no previous prototype for "
                    "'foo' [-Wmissing-prototypes]\n")
    assert utf8.key == ascii_.key


def test_objtool_modpost_kconfig_ld_and_cc1_lines():
    diags = parse(
        "vmlinux.o: warning: objtool: do_boot_cpu+0x1b4: call to "
        "cpuhp_ap_sync_alive() leaves .noinstr.text section\n"
        "WARNING: modpost: vmlinux.o: section mismatch in reference: "
        "cpu_bringup (section: .text) -> smp_store_cpu_info (section: "
        ".init.text)\n"
        "WARNING: unmet direct dependencies detected for HOTPLUG_PARALLEL\n"
        "arch/x86/Kconfig:250:warning: symbol value 'n' invalid for "
        "NR_CPUS\n"
        "aarch64-linux-gnu-ld: warning: arch/arm64/kernel/vmlinux.lds "
        "has a LOAD segment with RWX permissions\n"
        "cc1: warning: arch/x86/include/generated: No such file or "
        "directory [-Wmissing-include-dirs]\n",
        cross="aarch64-linux-gnu-")
    assert [(d.file, d.line, d.kind) for d in diags] == [
        ("vmlinux.o", 0, "warning"), ("", 0, "warning"),
        ("", 0, "warning"), ("arch/x86/Kconfig", 250, "warning"),
        ("ld", 0, "warning"), ("cc1", 0, "warning")]
    assert diags[0].text == ("objtool: do_boot_cpu: call to "
                             "cpuhp_ap_sync_alive() leaves .noinstr.text "
                             "section")


def test_gcc_error_is_kept_as_an_error():
    diag, = parse("../linux/kernel/cpu.c:1400:9: error: implicit "
                  "declaration of function 'arch_cpuhp_kick_ap_alive' "
                  "[-Werror=implicit-function-declaration]\n")
    assert diag.kind == "error" and diag.file == "kernel/cpu.c"


def test_moved_warnings_are_not_new_added_ones_are():
    base = kbuild.parse_diagnostics(BASE_LOG, BASE_TREE, BASE_OUT)
    series = parse(SERIES_LOG)
    new = kbuild.new_diagnostics(base, series)
    assert [d.show() for d in new] == [
        "kernel/cpu.c:1510:14: warning: symbol 'cpuhp_parallel_window' was "
        "not declared. Should it be static?",
        "arch/x86/kernel/smpboot.c:1301:6: warning: no previous prototype "
        "for 'arch_cpuhp_sync_state_poll' [-Wmissing-prototypes]"]


def test_same_text_elsewhere_is_new():
    base = parse("kernel/cpu.c: In function 'a':\n"
                 "kernel/cpu.c:10:5: warning: unused variable 'ret' "
                 "[-Wunused-variable]\n")
    other_function = parse("kernel/cpu.c: In function 'b':\n"
                           "kernel/cpu.c:50:5: warning: unused variable "
                           "'ret' [-Wunused-variable]\n")
    other_file = parse("kernel/smpboot.c: In function 'a':\n"
                       "kernel/smpboot.c:10:5: warning: unused variable "
                       "'ret' [-Wunused-variable]\n")
    assert kbuild.new_diagnostics(base, other_function) == other_function
    assert kbuild.new_diagnostics(base, other_file) == other_file


def test_objtool_fall_through_into_the_next_function_is_new():
    # the series' build with Debian's amd64 config, the base's without
    line = ("kernel/cpu.o: warning: objtool: cpuhp_ap_report_alive() "
            "falls through to next function bringup_hibernate_cpu()")
    series = parse(f"  CC      kernel/cpu.o\n{line}\n")
    new = kbuild.new_diagnostics(parse("  CC      kernel/cpu.o\n"), series)
    assert [d.file for d in new] == ["kernel/cpu.o"]
    assert "falls through to next function" in new[0].text


def test_objtool_offsets_and_frame_sizes_do_not_make_a_warning_new():
    base = parse("vmlinux.o: warning: objtool: do_boot_cpu+0x1a0: "
                 "unreachable instruction\n"
                 "../linux/kernel/cpu.c:900:1: warning: the frame size of "
                 "1032 bytes is larger than 1024 bytes "
                 "[-Wframe-larger-than=]\n")
    series = parse("vmlinux.o: warning: objtool: do_boot_cpu+0x1c8: "
                   "unreachable instruction\n"
                   "../linux/kernel/cpu.c:931:1: warning: the frame size of "
                   "1048 bytes is larger than 1024 bytes "
                   "[-Wframe-larger-than=]\n")
    assert kbuild.new_diagnostics(base, series) == []


def test_a_repeated_new_warning_is_listed_once():
    line = "include/linux/cpuhotplug.h:123:1: warning: 'x' defined but " \
           "not used [-Wunused-function]\n"
    series = parse(f"  CC      kernel/cpu.o\n{line}"
                   f"  CC      kernel/smpboot.o\n{line}")
    assert len(series) == 2
    assert len(kbuild.new_diagnostics([], series)) == 1


def test_no_warnings_no_new_ones():
    assert kbuild.new_diagnostics(parse(BASE_LOG), []) == []
    assert kbuild.new_diagnostics([], []) == []


# Excerpts of Linux 6.1's makefiles, as the touched files' lookup sees them.
KERNEL_MAKEFILE = """\
obj-y     = fork.o exec_domain.o panic.o \\
	    cpu.o exit.o softirq.o resource.o \\
	    signal.o sys.o umh.o workqueue.o pid.o task_work.o \\
	    async.o range.o smpboot.o ucount.o regset.o
ifneq ($(CONFIG_SMP),y)
obj-y += up.o
endif
obj-y += sched/
"""
X86_KBUILD = """\
obj-y += entry/
# Xen paravirtualization support
obj-$(CONFIG_XEN) += xen/
obj-y += realmode/
obj-y += kernel/
"""
X86_KERNEL_MAKEFILE = """\
obj-y			+= head_$(BITS).o
obj-y			+= head$(BITS).o
obj-y			+= tsc.o tsc_msr.o io_delay.o rtc.o
obj-y				+= cpu/
obj-y				+= acpi/
obj-$(CONFIG_SMP)		+= smpboot.o
obj-$(CONFIG_X86_TSC)		+= tsc_sync.o
obj-y				+= apic/
"""
XEN_MAKEFILE = """\
obj-$(CONFIG_XEN_PV)		+= setup.o
obj-$(CONFIG_XEN_PV_SMP)  	+= smp_pv.o
obj-$(CONFIG_XEN_PVHVM_SMP)  	+= smp_hvm.o
"""
ACPI_MAKEFILE = """\
obj-$(CONFIG_ACPI)		+= boot.o
obj-$(CONFIG_ACPI_SLEEP)	+= sleep.o wakeup_$(BITS).o
ifneq ($(CONFIG_ACPI_PROCESSOR),)
obj-y				+= cstate.o
endif
"""
CPU_MAKEFILE = """\
obj-y			+= common.o
ifdef CONFIG_CPU_SUP_INTEL
obj-y			+= intel.o intel_pconfig.o tsx.o
obj-$(CONFIG_PM)	+= intel_epb.o
else
obj-y			+= nointel.o
endif
obj-$(CONFIG_MTRR)			+= mtrr/
"""
COMPOSITE_MAKEFILE = """\
obj-$(CONFIG_FOO) += foo.o
foo-y := foo_core.o foo_smp.o
"""
MAKEFILES = {"kernel": KERNEL_MAKEFILE, "arch/x86": X86_KBUILD,
             "arch/x86/kernel": X86_KERNEL_MAKEFILE,
             "arch/x86/xen": XEN_MAKEFILE,
             "arch/x86/kernel/acpi": ACPI_MAKEFILE,
             "arch/x86/kernel/cpu": CPU_MAKEFILE,
             "arch/x86/kernel/cpu/mtrr": "obj-y := mtrr.o if.o\n"}
GUEST = {"CONFIG_SMP": "y", "CONFIG_X86_TSC": "y", "CONFIG_ACPI": "y",
         "CONFIG_CPU_SUP_INTEL": "y", "CONFIG_MTRR": "y"}


def enabled(obj, config):
    return kbuild.object_enabled(obj, MAKEFILES.get, config)


def test_makefile_verdicts():
    assert kbuild.makefile_verdict(KERNEL_MAKEFILE, "smpboot.o", {})
    assert kbuild.makefile_verdict(KERNEL_MAKEFILE, "up.o",
                                      {"CONFIG_SMP": "y"}) is False
    assert kbuild.makefile_verdict(KERNEL_MAKEFILE, "up.o", {})
    assert kbuild.makefile_verdict(KERNEL_MAKEFILE, "nosuch.o",
                                      {}) is None
    assert kbuild.makefile_verdict(ACPI_MAKEFILE, "sleep.o",
                                      {"CONFIG_ACPI_SLEEP": "y"})
    assert kbuild.makefile_verdict(ACPI_MAKEFILE, "cstate.o",
                                      {}) is False
    assert kbuild.makefile_verdict(
        ACPI_MAKEFILE, "cstate.o", {"CONFIG_ACPI_PROCESSOR": "m"})


def test_ifdef_else_and_composite_objects():
    intel = {"CONFIG_CPU_SUP_INTEL": "y"}
    assert kbuild.makefile_verdict(CPU_MAKEFILE, "intel.o", intel)
    assert kbuild.makefile_verdict(CPU_MAKEFILE, "nointel.o",
                                      intel) is False
    assert kbuild.makefile_verdict(CPU_MAKEFILE, "intel.o", {}) is False
    assert kbuild.makefile_verdict(CPU_MAKEFILE, "nointel.o", {})
    assert kbuild.makefile_verdict(COMPOSITE_MAKEFILE, "foo_smp.o",
                                      {"CONFIG_FOO": "y"})
    assert kbuild.makefile_verdict(COMPOSITE_MAKEFILE, "foo_smp.o",
                                      {}) is False


def test_touched_objects_the_guest_config_does_not_build_are_left_out():
    assert enabled("kernel/cpu.o", GUEST)
    assert enabled("arch/x86/kernel/smpboot.o", GUEST)
    assert not enabled("arch/x86/kernel/smpboot.o", {})
    # the directory is out (no XEN), whatever its own makefile says
    assert not enabled("arch/x86/xen/smp_pv.o",
                       dict(GUEST, CONFIG_XEN_PV_SMP="y"))
    assert enabled("arch/x86/xen/smp_pv.o",
                   dict(GUEST, CONFIG_XEN="y", CONFIG_XEN_PV_SMP="y"))
    assert not enabled("arch/x86/kernel/acpi/sleep.o", GUEST)
    assert not enabled("arch/x86/kernel/cpu/mtrr/mtrr.o",
                       dict(GUEST, CONFIG_MTRR="n"))
    assert enabled("arch/x86/kernel/cpu/mtrr/mtrr.o", GUEST)
    # named only through $(BITS), or in no makefile: built
    assert enabled("arch/x86/kernel/head64.o", GUEST)
    assert enabled("lib/nosuch/thing.o", {})


def test_touched_objects_of_a_series():
    files = ["Documentation/admin-guide/kernel-parameters.txt",
             "arch/x86/kernel/smpboot.c", "arch/x86/kernel/head_64.S",
             "arch/x86/include/asm/smp.h", "kernel/cpu.c",
             "kernel/smpboot.h", "arch/arm64/kernel/smp.c",
             "tools/testing/selftests/cpu-hotplug/x.c", "kernel/cpu.c"]
    assert kbuild.touched_objects(files, "x86") == [
        "arch/x86/kernel/smpboot.o", "kernel/cpu.o"]
    assert kbuild.touched_objects(files, "arm64") == [
        "arch/arm64/kernel/smp.o", "kernel/cpu.o"]


# --- Targets and options -------------------------------------------------

def test_target_list():
    every = buildtest.targets()
    names = [t.name for t in every]
    assert len(names) == len(set(names))
    from bringuplab.build import kconfig
    from bringuplab.host import packages
    for flavour, flav in kconfig.FLAVOURS.items():
        # a Debian-based flavour is built by its debian-* target
        assert (f"x86_64-{flavour}" in names) == (not flav.base)
    assert "debian-cloud-amd64" in names
    for name in ("debian-amd64", "debian-cloud-amd64", "i386-smp",
                 "arm64", "riscv64", "ppc64le", "x86_64-noparallel",
                 "x86_64-nosmp", "x86_64-w1", "x86_64-sparse"):
        assert name in names
    by = {t.name: t for t in every}
    assert [by[n].cross for n in ("arm64", "riscv64", "ppc64le")] == [
        "aarch64-linux-gnu-", "riscv64-linux-gnu-", "powerpc64le-linux-gnu-"]
    assert by["ppc64le"].arch == "powerpc" and by["riscv64"].arch == "riscv"
    assert by["arm64"].goals == (buildtest.TOUCHED, "kernel/cpu.o",
                                 "kernel/smpboot.o", "kernel/workqueue.o")
    assert by["arm64"].full_goals == ("vmlinux",)
    assert by["i386-smp"].arch == "i386" and not by["i386-smp"].cross
    assert ("SMP", "y") in by["i386-smp"].recipe.options
    assert by["x86_64-noparallel"].recipe.options == (
        ("HOTPLUG_PARALLEL", "n"),)
    assert "W=1" in by["x86_64-w1"].extra and "C=1" in \
        by["x86_64-sparse"].extra
    assert by["x86_64-w1"].goals == (buildtest.TOUCHED,)
    # objtool's per-object check in minutes, before the long targets
    quick = by["debian-amd64-touched"]
    assert quick.goals == (buildtest.TOUCHED,)
    assert quick.recipe == by["debian-amd64"].recipe
    assert names.index("debian-amd64-touched") < names.index("arm64")
    debian = by["debian-cloud-amd64"].recipe
    assert debian.arg == "config.amd64_none_cloud-amd64.xz"
    assert {"MODULE_SIG_KEY": '""', "SYSTEM_TRUSTED_KEYS": '""',
            "DEBUG_INFO_BTF": "n", "DEBUG_INFO_NONE": "y"}.items() <= \
        dict(debian.options).items()
    rand = [t for t in every if t.recipe.kind == "randconfig"]
    assert len(rand) == 4 and len({t.recipe.arg for t in rand}) == 4
    assert all(("SMP", "y") in t.recipe.options and ("64BIT", "y") in
               t.recipe.options and t.goals == (buildtest.TOUCHED,)
               for t in rand)
    stages = {**packages.NEEDS, **packages.BUILDTEST_NEEDS}
    for target in every:
        assert target.recipe.kind in buildtest.RECIPES
        assert all(stage in stages for stage in target.needs), target.name
    assert "sparse" in by["x86_64-sparse"].needs
    assert "gcc-aarch64-linux-gnu" in stages[by["arm64"].needs[0]]


def test_buildtest_packages_stay_out_of_what_check_installs():
    from bringuplab.host import packages
    every = [p for pkgs in packages.NEEDS.values() for p in pkgs]
    assert "gcc-aarch64-linux-gnu" not in every and "sparse" not in every


def test_only_selects_in_list_order_and_takes_patterns():
    assert [t.name for t in buildtest.select("ppc64le,arm64")] == [
        "arm64", "ppc64le"]
    assert [t.name for t in buildtest.select("x86_64-rand-*")] == [
        f"x86_64-rand-{seed}" for seed in buildtest.RAND_SEEDS]
    assert len(buildtest.select("")) == len(buildtest.targets())


def test_only_refuses_unknown_names():
    with pytest.raises(LabError, match="unknown buildtest target 'sparc'"):
        buildtest.select("arm64,sparc")
    with pytest.raises(LabError, match="names no target"):
        buildtest.select(",")


@pytest.mark.parametrize("args,message", [
    (["--only", "nosuch"], "unknown buildtest target 'nosuch'"),
    (["--only", "arm64", "--jobs", "0"], "--jobs 0: at least 1"),
    (["--jobs", "many"], "invalid int value"),
])
def test_usage_errors_are_one_line_exit_2(args, message):
    proc = subprocess.run([sys.executable, str(BRINGUP), "buildtest",
                           *args], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert not proc.stdout


def test_list_builds_nothing():
    proc = subprocess.run([sys.executable, str(BRINGUP), "buildtest",
                           "--list", "--only", "arm64,debian-*"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()[2:]
    assert [r.split()[0] for r in rows] == [
        "debian-amd64-touched", "arm64", "debian-amd64",
        "debian-cloud-amd64"]


def test_make_argv():
    by = {t.name: t for t in buildtest.targets()}
    out = Path("/b/out-arm64")
    assert buildtest.make_argv(by["arm64"], out, ["kernel/cpu.o"], 2) == [
        "make", "O=/b/out-arm64", "-j2", "--output-sync=target",
        "ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-",
        "CC=ccache aarch64-linux-gnu-gcc", "HOSTCC=gcc", "kernel/cpu.o"]
    assert buildtest.make_argv(by["i386-smp"], out, ["bzImage"], 4,
                               ccache=False) == [
        "make", "O=/b/out-arm64", "-j4", "--output-sync=target",
        "ARCH=i386", "CC=gcc", "HOSTCC=gcc", "bzImage"]
    sparse = buildtest.make_argv(by["x86_64-sparse"], out, ["x.o"], 1)
    assert sparse[-2:] == ["C=1", "x.o"]
    # config steps: no -j, no C=1
    assert "C=1" not in buildtest.make_argv(by["x86_64-sparse"], out,
                                            ["olddefconfig"])


def test_config_args():
    assert buildtest.config_args(buildtest.DEBIAN_FIXUPS[:4]) == [
        "--set-str", "MODULE_SIG_KEY", "", "--set-str",
        "SYSTEM_TRUSTED_KEYS", "", "--set-str", "SYSTEM_REVOCATION_KEYS",
        "", "--disable", "DEBUG_INFO_BTF"]
    assert buildtest.config_args((("SMP", "y"), ("NR_CPUS", "64"),
                                  ("X", "m"))) == [
        "--enable", "SMP", "--set-val", "NR_CPUS", "64", "--module", "X"]


# --- One side's configure and build, subprocess mocked -------------------

class FakeRunner:
    """Stands in for make and scripts/config: records argv, writes the
    .config a config step would, prints `build_output` for a build."""

    def __init__(self, dotconfig="CONFIG_SMP=y\n", build_output="",
                 build_code=0, apply_options=True):
        self.calls = []
        self.dotconfig = dotconfig
        self.build_output = build_output
        self.build_code = build_code
        self.apply_options = apply_options

    def __call__(self, argv, cwd, env):
        self.calls.append((argv, cwd, env))
        if argv[0] == "scripts/config":
            dotconfig = Path(argv[2])
            if self.apply_options:
                lines, args = [], argv[3:]
                while args:
                    op, opt = args[0], args[1]
                    if op in ("--set-str", "--set-val"):
                        lines.append(f'CONFIG_{opt}="{args[2]}"')
                        args = args[3:]
                        continue
                    lines.append(f"CONFIG_{opt}=y" if op == "--enable"
                                 else f"# CONFIG_{opt} is not set")
                    args = args[2:]
                with dotconfig.open("a") as fobj:
                    fobj.write("\n".join(lines) + "\n")
            return 0, ""
        out = Path(next(a for a in argv if a.startswith("O="))[2:])
        goal = argv[-1]
        if goal.endswith("config"):
            if not (out / ".config").exists():
                (out / ".config").write_text(self.dotconfig)
            return 0, "#\n# configuration written to .config\n#\n"
        return self.build_code, self.build_output


@pytest.fixture
def sides(tmp_path):
    """base and series trees with kernel/ and arch/x86/xen/ makefiles;
    the series adds kernel/newfile.c."""
    made = []
    for name in ("base", "series"):
        tree = tmp_path / name / "linux"
        for path, text in (("kernel/Makefile", KERNEL_MAKEFILE
                            + "obj-y += newfile.o\n"),
                           ("arch/x86/Kbuild", X86_KBUILD),
                           ("arch/x86/xen/Makefile", XEN_MAKEFILE),
                           ("kernel/cpu.c", ""), ("kernel/smpboot.c", ""),
                           ("kernel/workqueue.c", ""),
                           ("arch/x86/xen/smp_pv.c", "")):
            (tree / path).parent.mkdir(parents=True, exist_ok=True)
            (tree / path).write_text(text)
        made.append(buildtest.Side(name, tree))
    (made[1].tree / "kernel/newfile.c").write_text("")
    return tuple(made)


def target(name):
    return {t.name: t for t in buildtest.targets()}[name]


def test_cross_target_series_then_base_from_the_series_config(sides):
    base, series = sides
    arm64 = target("arm64")
    run = FakeRunner(build_output="  CC      kernel/cpu.o\n")
    got = buildtest.build_side(arm64, series, 2, False, [], run=run)
    argvs = [argv for argv, _, _ in run.calls]
    assert [a[-1] for a in argvs] == ["defconfig", "olddefconfig",
                                      "kernel/workqueue.o"]
    assert argvs[2][-3:] == ["kernel/cpu.o", "kernel/smpboot.o",
                             "kernel/workqueue.o"]
    assert all("ARCH=arm64" in a and "CROSS_COMPILE=aarch64-linux-gnu-"
               in a for a in argvs)
    assert all(cwd == series.tree for _, cwd, _ in run.calls)
    assert run.calls[2][2]["LC_ALL"] == "C"
    assert got.returncode == 0 and got.goals == [
        "kernel/cpu.o", "kernel/smpboot.o", "kernel/workqueue.o"]
    assert "kernel/cpu.o" in Path(got.log).read_text()
    (series.out(arm64) / ".config").write_text("CONFIG_SMP=y\nCONFIG_X=y\n")
    run = FakeRunner()
    buildtest.build_side(arm64, base, 2, False, [],
                         series.out(arm64) / ".config", run=run)
    assert [argv[-1] for argv, _, _ in run.calls] == [
        "olddefconfig", "kernel/workqueue.o"]
    assert "CONFIG_X=y" in (base.out(arm64) / ".config").read_text()


def test_cross_target_builds_the_generic_files_the_series_touches(sides):
    # the split-out series touch mm/ and kernel/ files that every
    # architecture builds; x86 files are not built for arm64, and an
    # object named twice is built once
    touched = ["kernel/newfile.c", "kernel/cpu.c", "arch/x86/xen/smp_pv.c"]
    got = buildtest.build_side(target("arm64"), sides[1], 2, False, touched,
                               run=FakeRunner())
    assert got.goals == ["kernel/cpu.o", "kernel/newfile.o",
                         "kernel/smpboot.o", "kernel/workqueue.o"]
    assert got.skipped == []


def test_series_side_carries_every_split_out_series(monkeypatch, tmp_path):
    monkeypatch.setattr(buildtest.treemod, "extra_names",
                        lambda: ["calibration", "scaling"])
    assert buildtest.series_built() == "ours+calibration+scaling"
    applied = []
    monkeypatch.setattr(buildtest.treemod, "is_tree", lambda: True)
    monkeypatch.setattr(buildtest.worktree, "fresh",
                        lambda where, rev: where)
    monkeypatch.setattr(buildtest.treemod, "combination",
                        lambda which: [Path(f"{which}.patch")])
    monkeypatch.setattr(buildtest.treemod, "apply_series",
                        lambda patches, tree: applied.append(
                            (patches, tree.parent.name)))
    base, series = buildtest.prepare_trees()
    assert (base.name, series.name) == ("base", "series")
    assert applied == [([Path("ours+calibration+scaling.patch")],
                        "series")]


def test_full_builds_vmlinux(sides):
    run = FakeRunner()
    got = buildtest.build_side(target("riscv64"), sides[1], 1, True, [],
                               run=run)
    assert got.goals == ["vmlinux"] and "ARCH=riscv" in run.calls[-1][0]


def test_randconfig_seed_and_forced_options(sides):
    rand = target("x86_64-rand-3")
    run = FakeRunner(dotconfig="CONFIG_64BIT=y\n# CONFIG_SMP is not set\n")
    buildtest.build_side(rand, sides[1], 1, False, [], run=run)
    argv, _, env = run.calls[0]
    assert argv[-1] == "randconfig" and env["KCONFIG_SEED"] == "3"
    assert run.calls[1][0][:3] == ["scripts/config", "--file",
                                   str(sides[1].out(rand) / ".config")]
    assert "--enable" in run.calls[1][0] and "SMP" in run.calls[1][0]


def test_options_that_do_not_stick_fail_the_target(sides):
    run = FakeRunner(dotconfig="CONFIG_64BIT=y\n# CONFIG_SMP is not set\n",
                     apply_options=False)
    with pytest.raises(LabError, match="CONFIG_SMP: want y, got n"):
        buildtest.build_side(target("x86_64-rand-1"), sides[1], 1, False,
                             [], run=run)


def test_debian_config_decompressed_and_fixed_up(sides, tmp_path,
                                                 monkeypatch):
    import lzma
    configs = tmp_path / "linux-config-6.1"
    configs.mkdir()
    (configs / "config.amd64_none_amd64.xz").write_bytes(lzma.compress(
        b"CONFIG_SMP=y\nCONFIG_DEBUG_INFO_BTF=y\n"
        b"CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y\n"))
    monkeypatch.setattr(kconfig, "DEBIAN_CONFIGS", configs)
    monkeypatch.setattr(kconfig.packages, "ensure", lambda stages: None)
    debian = target("debian-amd64")
    run = FakeRunner()
    got = buildtest.build_side(debian, sides[1], 2, False, [], run=run)
    dotconfig = (sides[1].out(debian) / ".config").read_text()
    assert dotconfig.startswith("CONFIG_SMP=y\nCONFIG_DEBUG_INFO_BTF=y\n")
    assert "# CONFIG_DEBUG_INFO_BTF is not set" in dotconfig
    assert [argv[-1] for argv, _, _ in run.calls][-2:] == [
        "olddefconfig", "vmlinux"]
    assert got.goals == ["vmlinux"]
    with pytest.raises(LabError, match="DEBUG_INFO_BTF: want n, got y"):
        buildtest.build_side(debian, sides[1], 2, False, [],
                             run=FakeRunner(apply_options=False))
    monkeypatch.setattr(kconfig, "DEBIAN_CONFIGS", tmp_path / "none")
    with pytest.raises(LabError, match="linux-config-6.1"):
        buildtest.build_side(debian, sides[1], 2, False, [], run=run)


def test_touched_objects_this_tree_or_config_lacks_are_skipped(
        sides, monkeypatch):
    base, series = sides

    def flavour(tree, out, name, overlay=True):
        assert name == "guest" and not overlay
        (out / ".config").write_text("CONFIG_SMP=y\n")
    monkeypatch.setattr(buildtest.kconfig, "configure", flavour)
    touched = ["kernel/cpu.c", "kernel/newfile.c", "arch/x86/xen/smp_pv.c",
               "include/linux/cpu.h"]
    w1 = target("x86_64-w1")
    run = FakeRunner()
    got = buildtest.build_side(w1, series, 2, False, touched, run=run)
    assert got.goals == ["kernel/cpu.o", "kernel/newfile.o"]
    assert got.skipped == ["arch/x86/xen/smp_pv.o"]
    assert run.calls[-1][0][-3:] == ["W=1", "kernel/cpu.o",
                                     "kernel/newfile.o"]
    got = buildtest.build_side(w1, base, 2, False, touched,
                               series.out(w1) / ".config", run=FakeRunner())
    assert got.goals == ["kernel/cpu.o"]
    assert got.skipped == ["arch/x86/xen/smp_pv.o", "kernel/newfile.o"]


def test_no_goal_left_builds_nothing(sides, monkeypatch):
    monkeypatch.setattr(buildtest.kconfig, "configure",
                        lambda tree, out, name, overlay: (out / ".config")
                        .write_text("CONFIG_SMP=y\n"))
    run = FakeRunner(build_code=2)
    got = buildtest.build_side(target("x86_64-sparse"), sides[1], 2, False,
                               ["Documentation/x.rst"], run=run)
    assert got.goals == [] and got.returncode == 0
    assert run.calls[-1][0][-1] == "olddefconfig"


# --- Base against series, the build mocked -------------------------------

def fake_build(outputs, codes=None):
    """build_side stand-in: per (target, side) output and exit code."""
    calls = []

    def build(target, side, jobs, full, touched, config_from=None):
        calls.append((target.name, side.name, config_from))
        key = (target.name, side.name)
        return buildtest.Outcome(side.name, (codes or {}).get(key, 0),
                                 outputs.get(key, ""), list(target.goals),
                                 log=f"/logs/{side.name}/{target.name}.log")
    build.calls = calls
    return build


def test_series_adding_a_warning_fails_the_target(sides):
    base, series = sides
    w1 = target("x86_64-w1")
    build = fake_build({
        ("x86_64-w1", "base"): BASE_LOG.replace(BASE_TREE, str(base.tree)),
        ("x86_64-w1", "series"): SERIES_LOG.replace(TREE, str(series.tree))})
    got = buildtest.compare_target(w1, sides, 2, False, [], build)
    assert [c[:2] for c in build.calls] == [("x86_64-w1", "series"),
                                            ("x86_64-w1", "base")]
    assert build.calls[1][2] == series.out(w1) / ".config"
    assert not got.ok
    lines = got.lines()
    assert lines[0].startswith("buildtest: FAIL x86_64-w1: 2 new warnings (")
    assert lines[1] == ("  kernel/cpu.c:1510:14: warning: symbol "
                        "'cpuhp_parallel_window' was not declared. Should "
                        "it be static?")
    assert got.counts == {"base": 2, "series": 4}


def test_same_warnings_pass_and_a_build_error_fails(sides):
    arm64 = target("arm64")
    same = "../linux/kernel/cpu.c:10:5: warning: x [-Wfoo]\n"
    got = buildtest.compare_target(arm64, sides, 1, False, [], fake_build(
        {("arm64", "base"): same, ("arm64", "series"): same}))
    assert got.ok and got.lines()[0].startswith(
        "buildtest: PASS arm64: 0 new warnings (")
    error = ("../linux/kernel/cpu.c:1400:9: error: implicit declaration of "
             "function 'arch_cpuhp_kick_ap_alive' [-Werror=implicit-"
             "function-declaration]\n"
             "make[3]: *** [../linux/scripts/Makefile.build:250: "
             "kernel/cpu.o] Error 1\n")
    got = buildtest.compare_target(arm64, sides, 1, False, [], fake_build(
        {("arm64", "series"): error}, {("arm64", "series"): 2}))
    assert not got.ok
    assert got.lines()[0].startswith("buildtest: FAIL arm64: 1 new warning, "
                                     "series build failed (make exit 2) (")
    assert "implicit declaration" in got.lines()[1]
    # a build that fails alike in both trees still fails
    got = buildtest.compare_target(arm64, sides, 1, False, [], fake_build(
        {}, {("arm64", "series"): 2, ("arm64", "base"): 2}))
    assert not got.ok and not got.new
    assert got.lines()[1] == "  series build failed (make exit 2)"


def test_configure_failure_fails_the_target_only(sides):
    def broken(target, side, *args):
        raise LabError("x86_64-debug: options did not stick: CONFIG_X")
    got = buildtest.compare_target(target("x86_64-debug"), sides, 1, False,
                                   [], broken)
    assert not got.ok and "configure failed" in got.lines()[0]


@pytest.fixture
def mocked_run(sides, tmp_path, monkeypatch):
    """buildtest.run with packages, trees and builds mocked."""
    ensured = []
    monkeypatch.setattr(buildtest.packages, "ensure", ensured.append)
    monkeypatch.setattr(buildtest, "prepare_trees", lambda: sides)
    monkeypatch.setattr(buildtest, "changed_files",
                        lambda side: ["kernel/cpu.c"])
    monkeypatch.setattr(buildtest, "environment",
                        lambda chosen, sides: {"tools": {"gcc": "gcc 12"}})
    monkeypatch.setattr(buildtest.record, "RESULTS", tmp_path / "results")
    return ensured


def test_run_fails_when_the_series_adds_a_warning(mocked_run, sides,
                                                  monkeypatch, capsys,
                                                  tmp_path):
    base, series = sides
    build = fake_build({
        ("arm64", "base"): "", ("arm64", "series"): "",
        ("x86_64-sparse", "base"): "",
        ("x86_64-sparse", "series"):
            f"{series.tree}/kernel/cpu.c:1510:14: warning: symbol "
            "'cpuhp_parallel_window' was not declared. Should it be "
            "static?\n"})
    monkeypatch.setattr(buildtest, "build_side", build)
    code = buildtest.run("x86_64-sparse,arm64", 2, False, False,
                         ["tools/bringup", "buildtest", "--only",
                          "x86_64-sparse,arm64"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[0].startswith("buildtest: FAIL x86_64-sparse: 1 new warning (")
    assert out[1] == ("  kernel/cpu.c:1510:14: warning: symbol "
                      "'cpuhp_parallel_window' was not declared. Should it "
                      "be static?")
    assert out[2].startswith("buildtest: PASS arm64: 0 new warnings (")
    assert out[-1] == "1 passed, 1 failed"
    assert mocked_run == [["tree", "kernel", "sparse", "cross-arm64"]]
    record, = (tmp_path / "results").glob("buildtest-*.json")
    saved = json.loads(record.read_text())
    # the lab's record schema: kind, ok, results, provenance
    assert (saved["kind"], saved["ok"]) == ("buildtest", False)
    assert saved["provenance"]["argv"] and saved["provenance"]["host"]
    data = saved["results"]
    assert data["argv"][-1] == "x86_64-sparse,arm64"
    assert data["touched"] == ["kernel/cpu.c"]
    assert data["tools"] == {"gcc": "gcc 12"}
    assert (data["passed"], data["failed"]) == (1, 1)
    sparse = data["targets"][0]
    assert sparse["name"] == "x86_64-sparse" and not sparse["ok"]
    assert sparse["new_warnings"][0]["file"] == "kernel/cpu.c"
    assert sparse["sides"]["series"]["diagnostics"] == 1
    assert data["targets"][1]["ok"]


def test_run_passes_without_new_warnings_and_json_goes_to_stdout(
        mocked_run, monkeypatch, capsys):
    warning = "../linux/kernel/cpu.c:10:5: warning: x [-Wfoo]\n"
    monkeypatch.setattr(buildtest, "build_side", fake_build(
        {("riscv64", "base"): warning, ("riscv64", "series"): warning}))
    assert buildtest.run("riscv64", 1, False, True, []) == 0
    captured = capsys.readouterr()
    # the record as written to results/
    printed = json.loads(captured.out)
    assert printed["kind"] == "buildtest" and printed["provenance"]
    record = printed["results"]
    assert (record["passed"], record["failed"]) == (1, 0)
    lines = [line for line in captured.err.splitlines()
             if not line.startswith("lab: ")]
    assert lines[0].startswith("buildtest: PASS riscv64: 0 new warnings (")
    assert lines[1] == "1 passed, 0 failed"
    assert record["complete"] and record["not_built"] == []


def test_a_run_cut_off_keeps_the_record_of_what_it_built(
        mocked_run, monkeypatch, tmp_path):
    built = fake_build({("riscv64", "base"): "", ("riscv64", "series"): ""})

    def cut_off_after_riscv64(target, side, *args, **kwargs):
        if target.name != "riscv64":
            raise KeyboardInterrupt
        return built(target, side, *args, **kwargs)
    monkeypatch.setattr(buildtest, "build_side", cut_off_after_riscv64)
    with pytest.raises(KeyboardInterrupt):
        buildtest.run("riscv64,ppc64le", 1, False, False, [])
    record, = (tmp_path / "results").glob("buildtest-*.json")
    data = json.loads(record.read_text())["results"]
    assert not data["complete"] and data["not_built"] == ["ppc64le"]
    assert [t["name"] for t in data["targets"]] == ["riscv64"]
    assert (data["passed"], data["failed"]) == (1, 0)


def test_only_steps_both_sides_run_are_compared(sides):
    """The series' defconfig/randconfig step runs in no base build: what
    it prints is logged, not compared."""
    class Noisy(FakeRunner):
        def __call__(self, argv, cwd, env):
            code, text = super().__call__(argv, cwd, env)
            if argv[-1] == "defconfig":
                text += "WARNING: unmet direct dependencies detected for X\n"
            return code, text
    got = buildtest.build_side(target("arm64"), sides[1], 1, False, [],
                               run=Noisy(build_output="a.c:1:1: warning: "
                                         "w\n"))
    assert "unmet" not in got.output and "a.c:1:1" in got.output
    assert "unmet" in Path(got.log).read_text()


def test_resume_keeps_what_a_run_cut_off_built_and_builds_the_rest(
        mocked_run, monkeypatch, tmp_path):
    lab = {"head": "lab-1", "dirty": False}
    monkeypatch.setattr(buildtest, "environment", lambda chosen, sides: {
        "repo": lab, "linux": {"base": "base-1"}})
    monkeypatch.setattr(buildtest, "identity", lambda: ("base-1", "lab-2"))
    # lab-2 changed the lab, not patches/; lab-0 had other patches
    monkeypatch.setattr(buildtest, "patches_at", lambda head: {
        "lab-0": "p0", "lab-1": "p1", "lab-2": "p1", "lab-3": "p1"}.get(
            head, ""))
    # lab-3 pinned another base tarball; each unpack's `base` commit id
    # differs, so the record's own is not what is compared
    monkeypatch.setattr(buildtest, "base_pin_at", lambda head: {
        "lab-1": "base-1", "lab-2": "base-1", "lab-3": "base-0"}.get(
            head, ""))
    built = fake_build({(t, s): "" for t in ("riscv64", "ppc64le", "arm64")
                        for s in ("base", "series")})
    names: list = []

    def cut_off_after_riscv64(target, side, *args, **kwargs):
        if target.name != "riscv64" and "cut" not in names:
            raise KeyboardInterrupt
        names.append(target.name)
        return built(target, side, *args, **kwargs)
    monkeypatch.setattr(buildtest, "build_side", cut_off_after_riscv64)
    with pytest.raises(KeyboardInterrupt):
        buildtest.run("riscv64,ppc64le", 1, False, False, [])
    cut, = (tmp_path / "results").glob("buildtest-*.json")
    (tmp_path / "cut.json").write_text(cut.read_text())
    cut.unlink()
    names.append("cut")
    assert buildtest.run("riscv64,ppc64le,arm64", 1, False, False, [],
                         str(tmp_path / "cut.json")) == 0
    assert names == ["riscv64", "riscv64", "cut", "arm64", "arm64",
                     "ppc64le", "ppc64le"]
    whole, = (tmp_path / "results").glob("buildtest-*.json")
    data = json.loads(whole.read_text())["results"]
    assert [t["name"] for t in data["targets"]] == ["riscv64", "arm64",
                                                    "ppc64le"]
    assert data["complete"] and data["kept"] == 1
    assert (data["passed"], data["failed"]) == (3, 0)
    # a record of other patches/, or a dirty checkout's, or another base
    # or --full, is refused
    for change, why in ((dict(repo={"head": "lab-0"}), "other patches/"),
                        (dict(repo=dict(lab, dirty=True)), "other patches/"),
                        (dict(repo=dict(lab, head="lab-3")),
                         "another base"),
                        (dict(full=True), "was a --full run")):
        data = json.loads((tmp_path / "cut.json").read_text())
        data["results"].update(change)
        with pytest.raises(buildtest.LabError, match=why):
            buildtest.kept_targets(data, "R", False, "base-1", "lab-2")
        # and the same in a record of before the lab's schema
        with pytest.raises(buildtest.LabError, match=why):
            buildtest.kept_targets(data["results"], "R", False, "base-1",
                                   "lab-2")
    data = json.loads((tmp_path / "cut.json").read_text())
    data["results"]["targets"][0]["ok"] = False
    assert buildtest.kept_targets(data, "R", False, "base-1", "lab-2") == []
    with pytest.raises(buildtest.LabError, match="not a buildtest record"):
        buildtest.kept_targets({"kind": "soak"}, "R", False, "b", "h")


def test_the_base_is_named_by_the_pinned_tarball_not_the_unpack():
    pinned = buildtest.basemod.load().sha256
    assert buildtest.base_pin_at("HEAD") == pinned
    assert buildtest.identity()[0] == pinned
    # the commit that pinned it has it; an unknown revision has none
    first = subprocess.run(["git", "log", "--format=%H", "--reverse", "--",
                            "BASE"], cwd=buildtest.ROOT, capture_output=True,
                           text=True, check=True).stdout.split()[0]
    assert buildtest.base_pin_at(first) == pinned
    assert buildtest.base_pin_at("0" * 40) == ""
    assert buildtest.base_pin_at("") == ""
