"""The hotplug state split against a real trace (tests/logs): the boot of
a 64-vCPU round-robin guest with trace_event=cpuhp, cut to CPUs 0-2, and
the System.map lines of its callbacks."""
from pathlib import Path

import pytest

from bringuplab import parse, states

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
    # bringup_cpu waits on the control CPU; cacheinfo runs on the AP
    assert split["bringup_cpu"].on_ap_us == 0
    assert split["bringup_cpu"].total_us == pytest.approx(29250, abs=1)
    cache = split["cacheinfo_cpu_online"]
    assert cache.on_ap_us == pytest.approx(cache.total_us)


def test_boot_cpu_and_tracer_callbacks_are_left_out(split):
    text = (LOGS / "states-rr64-parallel-trace-cpus0-2.log").read_text()
    assert "cpu: 0000" in text
    assert "trace_rb_cpu_prepare" not in split
    assert parse.parse(text, 0, plan=["cpus", "trace"]).steps["trace"] \
        == "pass"


def test_names_without_a_map():
    assert states.Symbols().name("sched_cpu_activate+0x0/0x1a0") == \
        "sched_cpu_activate"
    assert states.Symbols().name("0xffffffff810e2eec") == \
        "0xffffffff810e2eec"
