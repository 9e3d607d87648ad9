"""Every alternative of parse.SPLAT_TEXTS has a console line that only
it catches, so dropping any one of them fails a test: the line as a
kernel the lab boots prints it (a real log's where tests/logs has one,
else the kernel's format filled in, the source named), put into a real
log that passes, must fail that boot with the `splat` rule."""
import re
from typing import Dict, List, Tuple

import pytest

from bringuplab.verdict import judge, parse
from bringuplab.verdict.judge import Expect
from reallogs import insert_after, line_of, load, rules

# alternative -> (kind, line)
ROWS: Dict[str, Tuple[str, str]] = {
    # kernel/panic.c __warn(), include/asm-generic/bug.h CUT_HERE: a
    # console cut off right after it still shows the warning began
    r"WARNING: CPU: \d+ PID: \d+": (
        "WARN", "WARNING: CPU: 3 PID: 27 at kernel/cpu.c:1182 "
        "cpuhp_thread_fun+0x1a4/0x1f0"),
    r"------------\[ cut here \]------------": (
        "WARN", "------------[ cut here ]------------"),
    # arch/x86/mm/fault.c (page_fault_oops), arch/x86/kernel/dumpstack.c
    # __die_header() with "Oops", traps.c's GPFSTR and "invalid opcode"
    r"\bBUG: (?!KASAN|soft lockup)": (
        "BUG", "BUG: kernel NULL pointer dereference, address: "
        "0000000000000010"),
    r"Oops: ": ("BUG", "Oops: 0000 [#1] PREEMPT SMP NOPTI"),
    r"general protection fault": (
        "BUG", "general protection fault, probably for non-canonical "
        "address 0xdffffc0000000002: 0000 [#1] PREEMPT SMP KASAN NOPTI"),
    r"invalid opcode: ": ("BUG", "invalid opcode: 0000 [#1] PREEMPT SMP "
                                 "NOPTI"),
    r"Kernel panic - not syncing": (
        "panic", line_of(load("base-kexec-ir-timer-panic.log"),
                         "Kernel panic - not syncing")),
    # kernel/locking/lockdep.c, include/linux/debug_locks.h
    r"possible circular locking dependency": (
        "lockdep", line_of(load("lockdep-splat.log"),
                           "possible circular locking dependency")),
    r"inconsistent lock state": (
        "lockdep", "WARNING: inconsistent lock state"),
    r"possible recursive locking": (
        "lockdep", "WARNING: possible recursive locking detected"),
    r"lock held when returning": (
        "lockdep", "WARNING: lock held when returning to user space!"),
    r"DEBUG_LOCKS_WARN_ON": (
        "lockdep", "DEBUG_LOCKS_WARN_ON(chain->depth != curr->lockdep_depth"
        " - (i - 1))"),
    r"suspicious RCU usage": ("lockdep", "WARNING: suspicious RCU usage"),
    r"irq lock inversion": (
        "lockdep", "WARNING: possible irq lock inversion dependency "
        "detected"),
    # mm/kasan/report.c: the non-canonical hook after a GPF (a report's
    # own "BUG: KASAN: ..." line is caught by the same alternative)
    r"KASAN: ": ("KASAN", "KASAN: null-ptr-deref in range "
                          "[0x0000000000000010-0x0000000000000017]"),
    r"do_boot_cpu failed": (
        "boot-failed", line_of(load("fault-postalive-cpu3-8.log"),
                               "do_boot_cpu failed")),
    # kernel/cpu.c of 6.12, cpuhp_bp_sync_alive()
    r"failed to report alive state": (
        "boot-failed", "CPU3 failed to report alive state"),
    r"stuck with the real-mode stack lock": (
        "boot-failed", line_of(load("fault-rmstall-cpu3-8.log"),
                               "stuck with the real-mode stack lock")),
    # v1 of the series (commit 60696f0 of this repository)
    r"real-mode stack lock held by": (
        "boot-failed", "smpboot: real-mode stack lock held by APIC 0x3, "
        "cannot free it"),
    r"did not take its release": (
        "boot-failed", line_of(load("fault-postalive-cpu3-8.log"),
                               "did not take its release")),
    r"could not be stopped": (
        "boot-failed", line_of(load("v3-fault-unstoppable-cpu3-8-multi.log"),
                               "could not be stopped")),
    r"not started, it may still run": (
        "boot-failed", line_of(load("v3-fault-stuckwait-cpu3-8-single-"
                                    "parallel.log"), "not started, it may")),
    r"did not come up within \d+ seconds": (
        "boot-failed", line_of(load("v2-fault-nosipi-cpu3-8-single.log"),
                               "did not come up within")),
    # kernel/watchdog.c; kernel/rcu/tree_stall.h
    r"CPU#\d+ stuck": (
        "stuck", "watchdog: BUG: soft lockup - CPU#2 stuck for 22s! "
        "[swapper/2:0]"),
    r"rcu_\w+ detected stalls": (
        "stuck", line_of(load("fault-postalive-mttcg16-gp-kthread-timer-"
                              "lost.log"), "detected stalls")),
    r"self-detected stall": (
        "stuck", line_of(load("debug32-rr-acpi-walk-rcu-self-stall.log"),
                         "self-detected stall")),
    r"Marking TSC unstable due to check_tsc_sync": (
        "tsc-off", line_of(load("fault-tschide-cpu6-8.log"),
                           "Marking TSC unstable due to check_tsc_sync")),
}

# A real log that passes (tests/test_judge.py), and where to put a line.
BASE = "series-intel-16-parallel.log"
BASE_WANT = Expect(16, 16, 16, ("cpus", "hotplug", "selftest"), "parallel")
AFTER = "smp: Brought up"


def alternatives() -> List[Tuple[str, str]]:
    return [(kind, alt) for kind, alts in parse.SPLAT_TEXTS for alt in alts]


def test_every_alternative_has_a_row_and_every_row_an_alternative():
    assert sorted(alt for _, alt in alternatives()) == sorted(ROWS)
    assert {alt: kind for kind, alt in alternatives()} == \
        {alt: kind for alt, (kind, _) in ROWS.items()}


def kinds_without(text: str, dropped: str) -> List[str]:
    """parse.splats() of `text` with one alternative dropped."""
    pats = [(kind, re.compile("|".join(a for a in alts if a != dropped)))
            for kind, alts in parse.SPLAT_TEXTS
            if [a for a in alts if a != dropped]]
    return [kind for line in text.splitlines()
            for kind, pat in pats if pat.search(line)][:1]


@pytest.mark.parametrize("alt", sorted(ROWS))
def test_the_row_is_a_splat_of_its_kind_and_only_its_alternative_catches_it(
        alt):
    kind, line = ROWS[alt]
    assert [s.split(":")[0] for s in parse.splats(line)] == [kind]
    # with its alternative dropped, no pattern of any kind catches it
    assert kinds_without(line, alt) == []


@pytest.mark.parametrize("alt", sorted(ROWS))
def test_the_row_in_a_real_log_fails_the_boot_by_the_splat_rule(alt):
    assert judge.judge(parse.parse(load(BASE)), BASE_WANT).ok
    kind, line = ROWS[alt]
    text = insert_after(load(BASE), AFTER,
                        "[    1.000000] " + line.strip() + "\n"
                        if not line.startswith("[") else line)
    got = judge.judge(parse.parse(text), BASE_WANT)
    assert rules(got) == ("splat",), got
    assert f"{kind}: " in got.reasons[0].text
