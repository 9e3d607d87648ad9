"""The hotplug state split against a real trace (tests/logs): the boot of
a 64-vCPU round-robin guest with trace_event=cpuhp, cut to CPUs 0-2, and
the System.map lines of its callbacks."""
from pathlib import Path

import pytest

from bringuplab.verdict import parse, states

LOGS = Path(__file__).resolve().parent / "logs"


@pytest.fixture(name="split")
def fixture_split():
    text = (LOGS / "states-rr64-parallel-trace-cpus0-2.log").read_text()
    syms = states.Symbols((LOGS / "states-rr64-trace.System.map")
                          .read_text())
    return states.per_state(text, syms)


def test_every_ap_callback_is_paired_and_named(split):
    # Two APs (1, 2), each through the same states once; one callback
    # (perf_event_init_cpu) serves two states
    assert split and all(st.calls == 2 for name, st in split.items()
                         if name != "perf_event_init_cpu")
    assert split["perf_event_init_cpu"].calls == 4
    assert not any(name.startswith("0x") for name in split)


def test_control_cpu_and_ap_side(split):
    # bringup_cpu runs on the control CPU, 29250 us for the two APs, of
    # which their ONLINE callbacks, nested in it and run by the APs
    # themselves, took 3275 us
    assert split["bringup_cpu"].on_ap_us == 0
    assert split["bringup_cpu"].total_us == pytest.approx(29250 - 3275,
                                                          abs=2)
    online = split["workqueue_online_cpu"]
    assert online.on_ap_us == pytest.approx(online.total_us)
    assert split["workqueue_prepare_cpu"].on_ap_us == 0


def test_states_registered_after_the_bringup_are_left_out(split):
    # cacheinfo and topology register their states by initcalls after
    # smp_init(), and run them then for every CPU online: not bringup
    text = (LOGS / "states-rr64-parallel-trace-cpus0-2.log").read_text()
    syms = states.Symbols((LOGS / "states-rr64-trace.System.map")
                          .read_text())
    traced = {syms.name(m.group(6)) for m in states.ENTER.finditer(text)}
    for name in ("cacheinfo_cpu_online", "topology_add_dev"):
        assert name in traced and name not in split


def test_an_exit_without_enter_is_an_error():
    text = (LOGS / "states-rr64-parallel-trace-cpus0-2.log").read_text()
    first_enter = next(line for line in text.splitlines()
                       if "cpuhp_enter: cpu: 0001" in line)
    with pytest.raises(states.TraceError):
        states.per_state(text.replace(first_enter + "\n", "", 1))


def test_boot_cpu_and_tracer_callbacks_are_left_out(split):
    text = (LOGS / "states-rr64-parallel-trace-cpus0-2.log").read_text()
    assert "cpu: 0000" in text
    assert "trace_rb_cpu_prepare" not in split
    assert parse.parse(text).steps["trace"] \
        == "pass"


def test_a_map_of_another_kernel_is_refused():
    syms = states.Symbols("ffffffff81000000 T start\n")
    with pytest.raises(KeyError):
        syms.name("0xffffffff810e2eec")


def test_names_without_a_map():
    assert states.Symbols().name("sched_cpu_activate+0x0/0x1a0") == \
        "sched_cpu_activate"
    assert states.Symbols().name("0xffffffff810e2eec") == \
        "0xffffffff810e2eec"


@pytest.fixture(name="window_split")
def fixture_window_split():
    """The same machine with the window's last CPU started once the one
    before it is up (patch 33): each AP's bringup_cpu() stops at its
    idle task, and a later kick of its hotplug thread runs the ONLINE
    callbacks."""
    text = (LOGS / "states-rr64-window-trace-cpus0-2.log").read_text()
    syms = states.Symbols((LOGS / "states-rr64-window-trace.System.map")
                          .read_text())
    return states.per_state(text, syms)


def test_online_callbacks_resumed_after_bringup_cpu_count(window_split):
    for name in ("workqueue_online_cpu", "smpboot_unpark_threads",
                 "sched_cpu_activate"):
        st = window_split[name]
        assert st.calls == 2 and st.on_ap_us == pytest.approx(st.total_us)
    resume = window_split[states.RESUME]
    assert resume.calls == 2 and resume.on_ap_us == 0
    # The ONLINE callbacks nest in the resume, not in bringup_cpu
    assert 0 < resume.total_us < window_split["bringup_cpu"].total_us


def test_states_registered_after_a_windowed_bringup_are_left_out(
        window_split):
    for name in ("cacheinfo_cpu_online", "topology_add_dev"):
        assert name not in window_split
