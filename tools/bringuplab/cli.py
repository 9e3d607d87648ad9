"""`bringup`: one command line for the lab (see README.md)."""
import argparse
import json
import os
import sys
from pathlib import Path
from typing import List, Optional

from . import (boot, buildtest, checkpatch, initramfs, kconfig, kernel,
               machine as machmod, matrix, packages, tree)
from .errors import LabError
from .paths import out_dir


class Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as one line, exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise LabError(f"usage: {message} (see `bringup {self.prog.split()[-1]}"
                       " --help`)" if " " in self.prog else
                       f"usage: {message}")


def cmd_setup(_: argparse.Namespace) -> int:
    packages.ensure(list(packages.NEEDS))
    print("lab: all packages present")
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    packages.ensure(["tree"])
    print("lab: " + tree.create(reset=args.reset))
    return 0


def cmd_export(_: argparse.Namespace) -> int:
    count = tree.export()
    print(f"lab: exported {count} patches to patches/")
    return 0


def cmd_kernel(args: argparse.Namespace) -> int:
    for name in args.config.split(","):
        kconfig.flavour(name)
    if not args.each and "," in args.config:
        raise LabError("a comma list of configs needs --each")
    packages.ensure(["kernel"])
    if args.each:
        from . import bisect
        return bisect.run(args.config.split(","), args.first, args.last)
    if args.first != 1 or args.last:
        raise LabError("--from and --to need --each")
    print(kernel.build(args.config))
    return 0


def cmd_initramfs(_: argparse.Namespace) -> int:
    packages.ensure(["initramfs"])
    print(initramfs.build())
    return 0


def _plan(text: str) -> List[str]:
    steps = [s for s in text.split(",") if s]
    known = ("cpus", "hotplug", "online-all", "selftest", "selftest-all",
             "kexec", "suspend", "stress", "online-fails", "trace",
             "smt-on")
    bad = [s for s in steps if s not in known]
    if bad:
        raise LabError(f"unknown plan step '{bad[0]}' (known: "
                       f"{', '.join(known)})")
    return steps


def cmd_boot(args: argparse.Namespace) -> int:
    boot.check_accel(args.accel)
    if args.silence < 0:
        raise LabError("--silence must be 0 (off) or a number of seconds")
    kern = Path(args.kernel) if args.kernel else boot.default_kernel()
    mach = machmod.make(args.cpus, args.topology, args.numa, args.profile,
                        args.x2apic, args.tcg, args.memory,
                        nr_cpus=boot.kernel_nr_cpus(kern), high=args.high)
    plan = _plan(args.plan)
    packages.ensure(["boot", "initramfs"])
    initrd = initramfs.build(kernel=kern if "kexec" in plan else None)
    spec = boot.BootSpec(mach, kern, initrd, args.append,
                         plan, args.timeout, args.label,
                         host_cpu=args.host_cpu, silence=args.silence)
    result = boot.run(spec, quiet=args.json)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        print(f"{result.verdict}: {result.cpus_online}/{mach.cpus} CPUs "
              f"online, mode {result.mode or '-'}, bringup "
              f"{result.bringup_ms} ms, apic {result.apic}")
        if result.host_wall_ms:
            print(f"  host: vCPU threads ran {result.host_vcpu_ms} ms in "
                  f"the {result.host_wall_ms} ms of the bringup")
        for why in result.reasons:
            print(f"  {why}")
    return 0 if result.verdict == "pass" else 1


def cmd_matrix(args: argparse.Namespace) -> int:
    matrix.entries(args.name)
    packages.ensure(["boot", "initramfs"])
    kern = Path(args.kernel) if args.kernel else boot.default_kernel()
    rows = matrix.run(args.name, kern, initramfs.build(),
                      expect_modes=bool(tree.series_files()))
    print(matrix.render(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(
            [dict(name=r.entry.name, ok=r.ok, problems=r.problems,
                  **r.result.to_dict()) for r in rows], indent=1))
    failed = sum(not r.ok for r in rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


def cmd_checkpatch(_: argparse.Namespace) -> int:
    reports = checkpatch.check_all()
    bad = 0
    for rep in reports:
        state = "clean" if not rep.findings else \
            f"{len(rep.findings)} findings"
        print(f"checkpatch: {rep.patch}: {state}"
              + (f" ({rep.excused} excused)" if rep.excused else ""))
        for finding in rep.findings:
            print(f"  {finding}")
        bad += bool(rep.findings)
    print(f"checkpatch: {len(reports)} patches, {bad} with findings")
    return 1 if bad else 0


def cmd_demo(_: argparse.Namespace) -> int:
    from . import demo
    return demo.run()


def cmd_bench(args: argparse.Namespace) -> int:
    from . import bench
    if args.render:
        return bench.render_saved(Path(args.render))
    bench.check_suite(args.suite, args.reps)
    variants = bench.pick_variants(args.variants)
    packages.ensure(list(packages.NEEDS))
    return bench.run(args.suite, args.reps, variants)


def cmd_compare(args: argparse.Namespace) -> int:
    from . import compare
    count = len(tree.series_files())
    without = [compare.patch_number(n, count) for n in args.without or []]
    if args.reps < 1:
        raise LabError("--reps must be at least 1")
    configs = compare.config_names(args.config or [])
    mach = machmod.make(args.cpus, args.topology, args.numa, args.profile,
                        args.x2apic, args.tcg)
    packages.ensure(["kernel", "boot", "initramfs"])
    return compare.run(mach, args.append or [], without, args.reps,
                       configs)


def cmd_states(args: argparse.Namespace) -> int:
    from . import states_report
    if args.reps < 1:
        raise LabError("--reps must be at least 1")
    mach = machmod.make(args.cpus, args.topology, args.numa, args.profile,
                        None, args.tcg)
    if args.logs:
        # Split the logs of earlier runs again (the kernel they booted
        # must still be the trace kernel built here, for its System.map)
        syms = states_report.symbols_of(out_dir("trace") /
                                        "arch/x86/boot/bzImage")
        boots = [states_report.analyse(log, syms) for log in args.logs]
    else:
        packages.ensure(["kernel", "boot", "initramfs"])
        boots = states_report.run(mach, args.reps)
    table = states_report.render(boots)
    print(table)
    print(f"lab: states: {states_report.save(boots, mach, table)}")
    return 0


def cmd_soak(args: argparse.Namespace) -> int:
    from . import soak
    return soak.run(args.boots, args.seed,
                    [s for s in args.only.split(",") if s], args.jobs,
                    args.entry, args.repeat)


def cmd_check(args: argparse.Namespace) -> int:
    from . import check
    return check.run(quick=args.quick)


def _server_machine(p: argparse.ArgumentParser) -> None:
    """The machine options of `compare` and `states`; by default the
    round-robin target machine, 64 vCPUs 2x16x2 in 2 NUMA nodes."""
    p.add_argument("--cpus", type=int, default=64)
    p.add_argument("--topology", default="2x16x2")
    p.add_argument("--numa", type=int, default=2)
    p.add_argument("--profile", default="intel")
    p.add_argument("--tcg", default="single")


def build_parser() -> argparse.ArgumentParser:
    top = Parser(prog="bringup", description="Parallel CPU bringup lab: "
                 "base -> tree -> kernel -> initramfs -> QEMU -> report.")
    sub = top.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    sub.add_parser("setup", help="install the Debian packages the lab uses")
    p = sub.add_parser("tree", help="unpack the base into build/linux, "
                       "git am the series (idempotent)")
    p.add_argument("--reset", action="store_true",
                   help="drop commits that are not in patches/")
    sub.add_parser("export", help="write base..HEAD of build/linux to "
                   "patches/")
    p = sub.add_parser("kernel", help="build bzImage (O=build/out-CONFIG)")
    p.add_argument("--config", default="guest",
                   help="guest (default), debug, kasan, nosmp; with "
                   "--each a comma list")
    p.add_argument("--each", action="store_true",
                   help="compile-test every patch of the series in turn")
    p.add_argument("--from", dest="first", type=int, default=1,
                   metavar="N", help="with --each: start at patch N "
                   "(resume an interrupted run)")
    p.add_argument("--to", dest="last", type=int, default=0,
                   metavar="N", help="with --each: stop after patch N")
    buildtest.add_parser(sub)
    sub.add_parser("initramfs", help="build the guest initramfs")
    p = sub.add_parser("boot", help="boot once in QEMU and judge it")
    p.add_argument("--cpus", type=int, default=4)
    p.add_argument("--topology", help="SOCKETSxCORESxTHREADS, e.g. 2x8x2")
    p.add_argument("--numa", type=int, default=1)
    p.add_argument("--high", type=int, default=0, metavar="N",
                   help="N of the --cpus take the topology's last slots "
                   "(highest APIC IDs), the rest its first; the slots "
                   "between are possible CPUs, not present")
    p.add_argument("--profile", default="intel",
                   help="intel (family 6 model 85) or amd (family 0x17)")
    apic = p.add_mutually_exclusive_group()
    apic.add_argument("--x2apic", dest="x2apic", action="store_true",
                      default=None)
    apic.add_argument("--no-x2apic", dest="x2apic", action="store_false")
    p.add_argument("--tcg", default="single", help="single or multi")
    p.add_argument("--accel", default="tcg", help="tcg (kvm: see error)")
    p.add_argument("--memory", type=int, default=0, help="MiB")
    p.add_argument("--append", default="", help="extra kernel parameters")
    p.add_argument("--plan", default="cpus",
                   help="guest steps: cpus,hotplug,selftest,selftest-all,"
                   "kexec (lab.kexec=N),suspend (lab.suspend=N),stress "
                   "(lab.stress=OPS),online-fails (lab.cpu=N),trace "
                   "(trace kernel, trace_event=cpuhp),smt-on (booted nosmt)")
    p.add_argument("--kernel", help="bzImage to boot (default: ours)")
    p.add_argument("--timeout", type=float, default=0,
                   help="seconds before the verdict is hang")
    p.add_argument("--silence", type=float, default=boot.SILENCE_S,
                   help="seconds without console output before the "
                   "verdict is hang (0: wait for --timeout); QEMU's "
                   "monitor state is saved next to the log")
    p.add_argument("--label", default="boot", help="log file name prefix")
    p.add_argument("--host-cpu", action="store_true",
                   help="also measure the host CPU QEMU's vCPU threads use "
                   "during the bringup")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("matrix", help="run a named list of boots")
    p.add_argument("name", help=", ".join(matrix.MATRICES))
    p.add_argument("--kernel")
    p.add_argument("--json", help="write the results to this file")
    sub.add_parser("checkpatch", help="checkpatch.pl --strict every patch")
    sub.add_parser("demo", help="32 vCPUs, default vs cpuhp.parallel=0")
    p = sub.add_parser("bench", help="ours vs upstream 6.12, interleaved")
    p.add_argument("--suite", default="quick", help="quick, full or rr64")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--variants", metavar="LIST", help="comma list of the "
                   "kernels and modes to boot (default: all five), e.g. "
                   "ours-parallel,ours-serial,upstream-parallel")
    p.add_argument("--render", metavar="JSON", help="print the tables of "
                   "a saved bench again (e.g. from git show "
                   "REV:bench/quick.json), by both clocks; boots nothing")
    p = sub.add_parser("compare", help="A/B boots of one machine by "
                       "command line or without a patch, interleaved")
    _server_machine(p)
    apic = p.add_mutually_exclusive_group()
    apic.add_argument("--x2apic", dest="x2apic", action="store_true",
                      default=None)
    apic.add_argument("--no-x2apic", dest="x2apic", action="store_false")
    p.add_argument("--append", action="append", metavar="PARAMS",
                   help="an arm: our kernel with these parameters "
                   "(repeat; none: one arm, the default command line)")
    p.add_argument("--without", action="append", metavar="N",
                   help="an arm: the series without patch N, booted with "
                   "the first --append (repeat)")
    p.add_argument("--config", action="append", metavar="FLAVOUR",
                   help="arms: the series built with this config flavour "
                   "(e.g. hz100, hz1000), booted with every --append "
                   "(repeat)")
    p.add_argument("--reps", type=int, default=3)
    p = sub.add_parser("states", help="the bringup split by hotplug "
                       "state, both modes (trace kernel)")
    _server_machine(p)
    p.add_argument("--reps", type=int, default=1)
    p.add_argument("--logs", nargs="+", help="split these console logs "
                   "of earlier states boots instead of booting")
    p = sub.add_parser("soak", help="the long reliability run")
    p.add_argument("--boots", type=int, default=300,
                   help="random machines in the matrix scenario")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only", default="", help="comma list of scenarios")
    p.add_argument("--entry", action="append", metavar="NAME",
                   help="only this boot of the soak (repeat the option "
                   "for more), e.g. to rerun a failure")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="with --entry: boot each entry N times")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="boots at a time (default: host CPUs)")
    p = sub.add_parser("check", help="the test command (make check)")
    p.add_argument("--quick", action="store_true",
                   help="unit tests and checkpatch only")
    return top


COMMANDS = {"setup": cmd_setup, "tree": cmd_tree, "export": cmd_export,
            "kernel": cmd_kernel, "buildtest": buildtest.command,
            "initramfs": cmd_initramfs,
            "boot": cmd_boot, "matrix": cmd_matrix,
            "checkpatch": cmd_checkpatch, "demo": cmd_demo, "bench": cmd_bench,
            "soak": cmd_soak, "states": cmd_states, "compare": cmd_compare,
            "check": cmd_check}


def main(argv: Optional[List[str]] = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.cmd](args)
    except LabError as err:
        print(f"bringup: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bringup: interrupted", file=sys.stderr)
        return 130

