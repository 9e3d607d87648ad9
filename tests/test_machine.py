"""Machine validation and the QEMU command line it turns into."""
import pytest

from bringuplab.guest import machine
from bringuplab.errors import LabError


def test_flat_default_is_one_socket_per_cpu():
    mach = machine.make(8)
    assert (mach.sockets, mach.cores, mach.threads) == (8, 1, 1)
    assert not mach.x2apic


def test_topology_must_multiply_to_cpus():
    with pytest.raises(LabError, match="is 4 CPUs, not --cpus 3"):
        machine.make(3, "2x2x1")


@pytest.mark.parametrize("bad", ["2x2", "axbxc", "2x0x1", "2*2*1"])
def test_bad_topology_text(bad):
    with pytest.raises(LabError):
        machine.make(4, bad)


def test_unknown_profile_and_tcg():
    with pytest.raises(LabError, match="unknown profile"):
        machine.make(2, profile="sparc")
    with pytest.raises(LabError, match="unknown TCG mode"):
        machine.make(2, tcg="fast")


def test_limits():
    with pytest.raises(LabError, match="at most 4096"):
        machine.make(4097, nr_cpus=8192)
    assert machine.make(4096, "2x1024x2", nr_cpus=8192).x2apic
    with pytest.raises(LabError, match="NR_CPUS=64"):
        machine.make(65, nr_cpus=64)
    with pytest.raises(LabError, match="at least 1"):
        machine.make(0)


def test_numa_must_split_cores():
    with pytest.raises(LabError, match="does not divide"):
        machine.make(6, "1x3x2", numa=2)
    mach = machine.make(32, "2x8x2", numa=2)
    assert mach.node_cpus() == [(0, 15), (16, 31)]


def test_apic_ids_above_254_need_x2apic():
    # 3 cores per socket round up to 4: sparse IDs, max = 4*... > 254.
    with pytest.raises(LabError, match="needs --x2apic"):
        machine.make(288, "2x72x2", x2apic=False)
    mach = machine.make(288, "2x72x2")
    assert mach.x2apic and mach.max_apic_id() > 254


def test_sparse_apic_ids():
    mach = machine.make(12, "2x3x2")
    # threads: 1 bit, cores: 2 bits -> socket 1 starts at APIC ID 8.
    assert mach.max_apic_id() == (1 << 3) | (2 << 1) | 1


def test_qemu_argv_x2apic_uses_interrupt_remapping():
    mach = machine.make(4, "1x2x2", x2apic=True, profile="amd", tcg="multi")
    argv = mach.qemu_argv("bzImage", "initrd", "console=ttyS0")
    joined = " ".join(argv)
    assert "intel-iommu,intremap=on,eim=on" in joined
    assert "vendor=AuthenticAMD" in joined and "x2apic=on" in joined
    assert "tcg,thread=multi" in joined
    assert "sockets=1,cores=2,threads=2" in joined


def test_qemu_argv_numa_nodes():
    mach = machine.make(8, "2x2x2", numa=2)
    joined = " ".join(mach.qemu_argv("k", None, ""))
    assert "node,nodeid=1,cpus=4-7,memdev=mem1" in joined
    assert "-initrd" not in joined and "intel-iommu" not in joined


def test_high_cpus_take_the_last_slots():
    # The soak's machine: 20 vCPUs of a 170-slot topology, APIC IDs up to
    # 289 (5 cores bits of 17 cores, 1 thread bit: sockets 64 IDs apart).
    mach = machine.make(20, "5x17x2", high=10)
    assert mach.x2apic and mach.slots == 170
    assert mach.present()[9:11] == [9, 160]
    assert mach.apic_id(160) == (4 << 6) | (12 << 1)
    assert mach.max_apic_id() == 289
    assert mach.linux_topologies() == [(2, 10, 2)]
    argv = mach.qemu_argv("k", None, "")
    joined = " ".join(argv)
    assert "-smp 10,sockets=5,cores=17,threads=2,maxcpus=170" in joined
    plugged = [argv[i + 1] for i, arg in enumerate(argv)
               if arg == "-device" and "-x86_64-cpu" in argv[i + 1]]
    assert len(plugged) == 10
    assert plugged[-1] == "max-x86_64-cpu,socket-id=4,core-id=16,thread-id=1"


def test_high_cpus_limits():
    with pytest.raises(LabError, match="is 170 CPUs, not --cpus 20"):
        machine.make(20, "5x17x2")
    with pytest.raises(LabError, match="--high 20"):
        machine.make(20, "5x17x2", high=20)
    with pytest.raises(LabError, match="--high 2: .* topology's 4"):
        machine.make(5, "1x2x2", high=2)
    with pytest.raises(LabError, match="--numa 1"):
        machine.make(4, "2x2x2", numa=2, high=2)
    with pytest.raises(LabError, match="5x17x2 has 170 CPU slots but the kernel has NR_CPUS=64"):
        machine.make(20, "5x17x2", high=10, nr_cpus=64)
    # Without --high the whole topology is present: -smp has no maxcpus.
    assert "maxcpus" not in " ".join(machine.make(4, "1x2x2").qemu_argv(
        "k", None, ""))
