"""`bringup`: one command line for the lab (see README.md)."""
import argparse
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Callable, List, Optional

from bringuplab import progress
from bringuplab.build import checkpatch, kconfig, kernel, tree, variants
from bringuplab.guest import boot, initramfs, machinespec
from bringuplab.host import packages
from bringuplab.report import record, render
from bringuplab.runs import bench, buildtest, matrix
from bringuplab.errors import LabError, UsageError, exit_status
from bringuplab.paths import out_dir
from bringuplab.runs.sysboot import CHECKS


class Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as one line, exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        name = self.prog.split()[-1]
        raise UsageError(f"usage: {message} (see `bringup {name} --help`)"
                         if " " in self.prog else f"usage: {message}")


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
        raise UsageError("a comma list of configs needs --each")
    packages.ensure(["kernel"])
    if args.each:
        from bringuplab.runs import each_patch
        return each_patch.run(args.config.split(","), args.first,
                              args.last, args.boot)
    if args.first != 1 or args.last or args.boot:
        raise UsageError("--from, --to and --boot need --each")
    print(kernel.build(args.config).image)
    return 0


def cmd_deb(args: argparse.Namespace) -> int:
    from bringuplab.build import deb
    rec = deb.command(args.config, args.jobs)
    return show(rec, args.json) if rec else 0


def cmd_image(args: argparse.Namespace) -> int:
    from bringuplab.build import deb
    from bringuplab.guest import image
    kern = image.Kernel(deb=Path(args.deb)) if args.deb else \
        image.Kernel(package=args.debian)
    built = image.build(args.name, kern, deb.SRC)
    print(f"{built.disk} ({built.release}: {built.vmlinuz}, "
          f"{built.initrd})")
    return 0


def cmd_sysboot(args: argparse.Namespace) -> int:
    from bringuplab.runs import sysboot
    if args.compare and (args.serial or args.plan is not None):
        # --compare boots every arm to multi-user and times it: it runs
        # no checks and picks each arm's mode itself
        raise UsageError("--serial and --plan are for a check boot, not "
                         "--compare")
    mach = machinespec.from_args(args).make()
    packages.ensure(["boot"])
    if args.compare:
        arms = [sysboot.Arm("debian", args.compare, None),
                sysboot.Arm("ours-parallel", args.image, "parallel"),
                sysboot.Arm("ours-serial", args.image, "serial")]
        return show(sysboot.compare(arms, mach, args.reps), args.json)
    result, _ = sysboot.check(args.image, mach,
                              "serial" if args.serial else "parallel",
                              sysboot.plan_of(args.plan or
                                              ",".join(CHECKS)))
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        print(f"{result.verdict}: {result.cpus_online}/{mach.cpus} CPUs "
              f"online, mode {result.mode or '-'}, multi-user "
              f"{result.host_milestone_ms} ms after QEMU's start, log "
              f"{result.log}")
        for why in result.reasons:
            print(f"  {why}")
    return 0 if result.verdict == "pass" else 1


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
        raise UsageError(f"unknown plan step '{bad[0]}' (known: "
                         f"{', '.join(known)})")
    return steps


def cmd_boot(args: argparse.Namespace) -> int:
    if args.silence < 0:
        raise UsageError("--silence must be 0 (off) or a number of seconds")
    kern = kernel.given(args.kernel)
    mach = machinespec.from_args(args).make(boot.kernel_nr_cpus(kern))
    plan = _plan(args.plan)
    packages.ensure(["boot", "initramfs"])
    initrd = initramfs.build(kernel=kern.image if "kexec" in plan
                             else None)
    spec = boot.BootSpec(mach, kern.image, initrd, args.append,
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
    started = record.now()
    packages.ensure(["boot", "initramfs"])
    kern = kernel.given(args.kernel)
    rows = matrix.run(args.name, kern, initramfs.build(),
                      expect_modes=bool(tree.series_files()),
                      done=progress.of_boots(len(matrix.entries(args.name)),
                                             args.name))
    failed, infra = matrix.counts(rows)
    saved = record.save(record.make(
        "matrix", not failed and not infra, {
            "command": f"tools/bringup matrix {args.name}"
                       + (f" --kernel {args.kernel}" if args.kernel else ""),
            "matrix": args.name, "passed": len(rows) - failed - infra,
            "failed": failed, "infra": infra,
            "boots": [matrix.row_record(r) for r in rows]}, started))
    if args.json:
        print(json.dumps(
            [dict(name=r.entry.name, ok=r.ok, problems=r.problems,
                  **r.result.to_dict()) for r in rows], indent=1))
    else:
        print(matrix.render(rows))
        print(f"{len(rows) - failed - infra} passed, {failed} failed"
              + (f", {infra} not booted (infrastructure)" if infra else ""))
    print(f"lab: matrix: record {saved}", file=sys.stderr)
    return exit_status(failed, infra)


def cmd_checkpatch(args: argparse.Namespace) -> int:
    reports = checkpatch.check_all()
    bad = sum(bool(rep.findings) for rep in reports)
    if args.json:
        print(json.dumps([dict(patch=rep.patch, findings=rep.findings,
                               excused=rep.excused) for rep in reports],
                         indent=1))
        return 1 if bad else 0
    for rep in reports:
        state = "clean" if not rep.findings else \
            f"{len(rep.findings)} findings"
        print(f"checkpatch: {rep.patch}: {state}"
              + (f" ({rep.excused} excused)" if rep.excused else ""))
        for finding in rep.findings:
            print(f"  {finding}")
    print(f"checkpatch: {len(reports)} patches, {bad} with findings")
    return 1 if bad else 0


def cmd_demo(args: argparse.Namespace) -> int:
    from bringuplab.runs import demo
    return demo.run(as_json=args.json)


def show(rec: "record.Record", as_json: bool) -> int:
    """A run's record on stdout, as markdown or as JSON; the exit
    status it means."""
    if as_json:
        print(json.dumps(rec.to_dict(), indent=1))
    else:
        print(render.markdown(rec))
    return record.status_of(rec)


def cmd_render(args: argparse.Namespace) -> int:
    """Print a record (or an older result file) again; boots nothing.
    With --json, also what stats.py derives from a bench or compare
    record. The exit status is 0 whatever the record says."""
    rec = record.load(Path(args.file))
    if args.json:
        print(json.dumps(dict(rec.to_dict(), derived=render.derived(rec)),
                         indent=1))
    else:
        print(render.markdown(rec))
    if rec.kind == "bench" and rec.results.get("suite") == "scale":
        # the plot a run cut short did not get to write
        from bringuplab.report import scale_tables
        path = Path(args.file)
        png = scale_tables.plot(render.samples_of(rec.results),
                                path.with_name(path.stem + "-scale.png"))
        progress.say(f"render: plot {png}" if png else
                     "render: no plot (no gnuplot, or no boot with a "
                     "window)")
    return 0


def cmd_growth(args: argparse.Namespace) -> int:
    """Two serialwork records side by side; boots nothing."""
    from bringuplab.report import growth_tables
    small, large = (record.load(Path(f)) for f in (args.small, args.large))
    for rec, name in ((small, args.small), (large, args.large)):
        if rec.kind != "serialwork":
            raise UsageError(f"growth: {name} is a {rec.kind} record, not "
                             f"serialwork")
    print(growth_tables.render(small.results, large.results))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from bringuplab.report import status
    return status.command(args.records, args.update)


def cmd_bench(args: argparse.Namespace) -> int:
    if args.render:
        args.file = args.render
        return cmd_render(args)
    bench.suite_machines(args.suite, args.cpus)   # bad input before apt
    picked = variants.pick_variants(args.variants, args.suite)
    packages.ensure(list(packages.NEEDS))
    return show(bench.run(args.suite, args.reps, picked, args.cpus),
                args.json)


def cmd_serialwork(args: argparse.Namespace) -> int:
    from bringuplab.runs import serialwork
    spec = machinespec.from_args(args)
    variants = serialwork.pick(args.variants)
    kconfig.flavour(args.config)
    packages.ensure(["kernel", "boot", "initramfs", "plugin"])
    return show(serialwork.run(spec, args.reps, variants, args.config),
                args.json)


def cmd_compare(args: argparse.Namespace) -> int:
    from bringuplab.runs import compare
    count = len(tree.series_files())
    without = [compare.patch_numbers(n, count) for n in args.without or []]
    configs = compare.config_names(args.config or [])
    spec = machinespec.from_args(args)
    packages.ensure(["kernel", "boot", "initramfs"])
    return show(compare.run(spec, args.append or [], without, args.reps,
                            configs), args.json)


def cmd_states(args: argparse.Namespace) -> int:
    from bringuplab.report import states_tables
    from bringuplab.runs import states_report
    spec = machinespec.from_args(args)
    started = record.now()
    if args.logs:
        # Split the logs of earlier runs again (the kernel they booted
        # must still be the trace kernel built here, for its System.map)
        syms = states_report.symbols_of(
            kernel.built_in(out_dir("trace"), "trace"))
        boots = [states_report.analyse(log, syms) for log in args.logs]
    else:
        packages.ensure(["kernel", "boot", "initramfs"])
        boots = states_report.run(spec, args.reps)
    # Both modes or nothing (UsageError), before a record is kept
    states_tables.render(boots)
    rec = record.make("states", True, states_report.results(boots, spec),
                      started)
    progress.say(f"states: record {record.save(rec)}")
    return show(rec, args.json)


def cmd_soak(args: argparse.Namespace) -> int:
    from bringuplab.runs import soak
    # The tables of each scenario as it ends are progress; the record
    # is the result
    with contextlib.redirect_stdout(sys.stderr):
        rec = soak.run(args.boots, args.seed,
                       [s for s in args.only.split(",") if s], args.jobs,
                       args.entry, args.repeat, args.resume)
    return show(rec, args.json)


def cmd_judge(args: argparse.Namespace) -> int:
    from bringuplab.runs import logexpect
    kept, result = logexpect.rejudge(Path(args.log))
    print(logexpect.to_json(kept, result) if args.json
          else logexpect.render(kept, result))
    return logexpect.exit_code(result)


def cmd_check(args: argparse.Namespace) -> int:
    """The PASS/FAIL lines are the report (stderr under --json, where the
    record is stdout); the record's path comes last."""
    from bringuplab.runs import check
    rec = check.run(quick=args.quick,
                    out=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(rec.to_dict(), indent=1))
    return record.status_of(rec)


def at_least_one(option: str) -> Callable[[str], int]:
    """An argparse type: a whole number, at least 1 (UsageError naming
    `option` if below)."""
    def value(text: str) -> int:
        number = int(text)      # ValueError: argparse's "invalid value"
        if number < 1:
            raise UsageError(f"{option} must be at least 1")
        return number
    value.__name__ = "int"
    return value


def cpu_counts(text: str) -> List[int]:
    """An argparse type: a comma list of vCPU counts, '32,64'."""
    counts = [int(item) for item in text.split(",") if item.strip()]
    if not counts:      # ValueError: argparse's "invalid value"
        raise ValueError(text)
    return sorted(set(counts))


cpu_counts.__name__ = "vCPU count list"


def _reps(p: argparse.ArgumentParser, default: int) -> None:
    p.add_argument("--reps", type=at_least_one("--reps"), default=default,
                   metavar="N", help="boots of each kernel or arm "
                   "(default: %(default)s)")


def _json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true",
                   help="print the results as JSON (progress stays on "
                   "stderr)")


def _build_commands(
        sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The stages that make what is booted: base, tree, kernel, initramfs."""
    sub.add_parser("setup", help="install the Debian packages the lab uses")
    p = sub.add_parser("tree", help="unpack the base into build/linux, "
                       "git am the series (idempotent)")
    p.add_argument("--reset", action="store_true",
                   help="drop commits that are not in patches/")
    sub.add_parser("export", help="write base..HEAD of build/linux to "
                   "patches/")
    p = sub.add_parser("kernel", help="build bzImage (O=build/out-CONFIG)")
    p.add_argument("--config", default="guest",
                   help=f"{', '.join(kconfig.FLAVOURS)} (default: "
                   "guest); with --each a comma list")
    p.add_argument("--boot", action="store_true",
                   help="with --each: also boot each patch's guest kernel "
                   "on 8 vCPUs, parallel and cpuhp.parallel=0")
    p.add_argument("--each", action="store_true",
                   help="compile-test every patch of the series in turn")
    p.add_argument("--from", dest="first", type=int, default=1,
                   metavar="N", help="with --each: start at patch N "
                   "(resume an interrupted run)")
    p.add_argument("--to", dest="last", type=int, default=0,
                   metavar="N", help="with --each: stop after patch N")
    buildtest.add_parser(sub)
    sub.add_parser("initramfs", help="build the guest initramfs")


def _boot_commands(
        sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The commands that boot and judge."""
    p = sub.add_parser("boot", help="boot once in QEMU and judge it")
    machinespec.add_options(p, machinespec.MachineSpec(4))
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
    _json(p)
    p = sub.add_parser("matrix", help="run a named list of boots")
    p.add_argument("name", help=", ".join(matrix.MATRICES))
    p.add_argument("--kernel")
    _json(p)
    _json(sub.add_parser("checkpatch",
                         help="checkpatch.pl --strict every patch"))
    _json(sub.add_parser("demo",
                         help="32 vCPUs, default vs cpuhp.parallel=0"))
    p = sub.add_parser("soak", help="the long reliability run")
    _json(p)
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
    p.add_argument("--resume", metavar="RECORD",
                   help="go on from the record of this soak cut off "
                   "earlier (same options, same patches/): boot only "
                   "what it did not")
    p = sub.add_parser("judge", help="judge a kept console log again "
                       "(exit 0 pass, 1 fail or hang, 3 infrastructure)")
    p.add_argument("log", help="a console log the lab wrote (build/logs, "
                   "a CI run's)")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("check", help="the test command (make check)")
    p.add_argument("--quick", action="store_true",
                   help="unit tests and checkpatch only")
    _json(p)


def _measure_commands(
        sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The commands that measure."""
    p = sub.add_parser("bench", help="ours vs upstream 6.12, interleaved")
    p.add_argument("--suite", default="quick", choices=sorted(bench.SUITES),
                   help="machines to boot (default: %(default)s)")
    _reps(p, 3)
    p.add_argument("--variants", metavar="LIST", help="comma list of the "
                   "kernels and modes to boot, e.g. ours-parallel,"
                   "ours-serial (default: the suite's in "
                   "variants.SUITE_VARIANTS, else all)")
    p.add_argument("--cpus", metavar="LIST", type=cpu_counts,
                   help="only the suite's machines of these vCPU counts, "
                   "e.g. 32,64 (default: all of them)")
    p.add_argument("--render", metavar="JSON", help="the same as "
                   "`bringup render JSON`; boots nothing")
    _json(p)
    p = sub.add_parser("compare", help="A/B boots of one machine by "
                       "command line or without a patch, interleaved")
    machinespec.add_options(p, machinespec.SERVER)
    p.add_argument("--append", action="append", metavar="PARAMS",
                   help="an arm: our kernel with these parameters "
                   "(repeat; none: one arm, the default command line)")
    p.add_argument("--without", action="append", metavar="N[,M]",
                   help="an arm: the series without patch N (and M ...), "
                   "booted with "
                   "the first --append (repeat)")
    p.add_argument("--config", action="append", metavar="FLAVOUR",
                   help="arms: the series built with this config flavour "
                   "(e.g. hz100, hz1000), booted with every --append "
                   "(repeat)")
    _reps(p, 3)
    _json(p)
    p = sub.add_parser("serialwork", help="instructions of the work done "
                       "one AP at a time, per kernel and phase (TCG plugin)")
    machinespec.add_options(p, machinespec.SERVER)
    p.add_argument("--variants", metavar="A,B", help="comma list of bench "
                   "variants (default: base-serial, upstream-parallel, "
                   "v1-parallel, v2-parallel, ours-parallel)")
    p.add_argument("--config", default="guest", metavar="FLAVOUR",
                   help="build every kernel with this config flavour, the "
                   "same on each machine size that `growth` compares "
                   "(e.g. scale-hz100; default: %(default)s)")
    _reps(p, 3)
    _json(p)
    p = sub.add_parser("states", help="the bringup split by hotplug "
                       "state, both modes (trace kernel)")
    machinespec.add_options(p, machinespec.SERVER)
    _reps(p, 1)
    p.add_argument("--logs", nargs="+", help="split these console logs "
                   "of earlier states boots instead of booting")
    _json(p)


def _debian_commands(
        sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The series as a Debian package, booted as a Debian system."""
    p = sub.add_parser("deb", help="the series as a Debian package: "
                       "make bindeb-pkg with Debian's config, into "
                       "results/deb/ (long)")
    p.add_argument("--config", default="cloud", choices=("cloud", "amd64"),
                   help="Debian's cloud-amd64 config or the full amd64 "
                   "one (default: %(default)s)")
    p.add_argument("--jobs", type=at_least_one("--jobs"), default=2,
                   metavar="N", help="make -jN (default: %(default)s)")
    _json(p)
    p = sub.add_parser("image", help="a Debian 12 disk image with a "
                       "kernel package installed (mmdebstrap, "
                       "mkfs.ext4 -d) in build/image/NAME/")
    p.add_argument("name", help="the image's name")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--deb", metavar="FILE", help="a linux-image .deb "
                       "(`bringup deb`), installed by dpkg")
    which.add_argument("--debian", metavar="PACKAGE", help="a kernel "
                       "package of the archive, e.g. linux-image-cloud-amd64")
    p = sub.add_parser("sysboot", help="boot a Debian image (bringup "
                       "image) through systemd: every check, or "
                       "--compare with Debian's kernel")
    p.add_argument("image", help="the image of our package")
    # A Debian system wants more memory than the lab's busybox guest
    machinespec.add_options(p, machinespec.MachineSpec(32, "2x8x2", 2,
                                                       memory_mb=2048))
    p.add_argument("--serial", action="store_true",
                   help="boot with cpuhp.parallel=0")
    p.add_argument("--plan", metavar="LIST",
                   help="the checks of the first kernel, in order, cpus "
                   f"first (default: {','.join(CHECKS)})")
    p.add_argument("--compare", metavar="IMAGE", help="boot times against "
                   "this image of Debian's kernel: debian, ours-parallel, "
                   "ours-serial in turn, --reps times; a sysboot record")
    _reps(p, 5)
    _json(p)


def _report_commands(
        sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The commands that print records."""
    p = sub.add_parser("render", help="print a record of results/ or "
                       "records/, of any kind, as markdown")
    p.add_argument("file", metavar="FILE")
    _json(p)
    p = sub.add_parser("growth", help="where the serialized work per "
                       "AP grows: two serialwork records of two machine "
                       "sizes, per phase and function")
    p.add_argument("small", metavar="SMALL", help="the smaller machine's "
                   "serialwork record")
    p.add_argument("large", metavar="LARGE", help="the larger one's")
    p = sub.add_parser("status", help="the README's Status section from "
                       "the newest check, bench, soak and buildtest "
                       "records of records/ (make status)")
    p.add_argument("records", nargs="*", metavar="RECORD",
                   help="these records instead of the newest ones")
    p.add_argument("--update", metavar="FILE", help="rewrite FILE's "
                   "section between <!-- status:begin --> and <!-- "
                   "status:end --> instead of printing it")


def build_parser() -> argparse.ArgumentParser:
    top = Parser(prog="bringup", description="Parallel CPU bringup lab: "
                 "base -> tree -> kernel -> initramfs -> QEMU -> report.",
                 epilog="exit status: 0 pass, 1 a test failed, 2 usage, "
                 "3 infrastructure (build, series, QEMU, apt)")
    sub = top.add_subparsers(dest="cmd", required=True, parser_class=Parser,
                             title="commands", metavar="COMMAND")
    _build_commands(sub)
    _boot_commands(sub)
    _measure_commands(sub)
    _debian_commands(sub)
    _report_commands(sub)
    return top


COMMANDS = {"setup": cmd_setup, "tree": cmd_tree, "export": cmd_export,
            "kernel": cmd_kernel, "buildtest": buildtest.command,
            "deb": cmd_deb, "image": cmd_image,
            "sysboot": cmd_sysboot,
            "initramfs": cmd_initramfs,
            "boot": cmd_boot, "matrix": cmd_matrix,
            "checkpatch": cmd_checkpatch, "demo": cmd_demo, "bench": cmd_bench,
            "render": cmd_render, "growth": cmd_growth,
            "status": cmd_status,
            "soak": cmd_soak, "states": cmd_states, "compare": cmd_compare,
            "serialwork": cmd_serialwork,
            "check": cmd_check, "judge": cmd_judge}


def main(argv: Optional[List[str]] = None) -> int:
    """Run one command; the exit status says how it ended (errors.py):
    0 pass, 1 a test failed, 2 usage, 3 infrastructure."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if not argv:
            # `bringup` alone: what there is to run
            print(build_parser().format_help())
            return 0
        args = build_parser().parse_args(argv)
        with boot.interruptible():
            code = COMMANDS[args.cmd](args)
        sys.stdout.flush()
        return code
    except LabError as err:
        print(f"bringup: error: {err}", file=sys.stderr)
        return err.exit_code
    except BrokenPipeError:
        return closed_pipe()
    except KeyboardInterrupt as err:
        # 128 + the signal, as a shell reports a command it ended
        signum = err.signum if isinstance(err, boot.Stopped) \
            else signal.SIGINT
        print(f"bringup: stopped by {signal.Signals(signum).name}",
              file=sys.stderr)
        return 128 + signum


def closed_pipe() -> int:
    """The reader of stdout went away (`bringup render X | head`): stop
    quietly, and keep the interpreter's last flush from complaining."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141
