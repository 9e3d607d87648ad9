"""The emulated machine: topology, CPU profile, APIC mode -> QEMU argv."""
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from bringuplab.errors import UsageError

PROFILES = {
    # Skylake-SP: CONSTANT_TSC, init_udelay = 0, like a modern server.
    "intel": "max,vendor=GenuineIntel,family=6,model=85,stepping=4",
    # Zen 2 (family 0x17): takes the kernel's AMD paths.
    "amd": "max,vendor=AuthenticAMD,family=23,model=49,stepping=0",
}
TCG_MODES = ("single", "multi")
# QEMU 10's q35 machine: `-smp 4097` is refused with "The max CPUs
# supported by machine 'pc-q35-10.0' is 4096"
MAX_VCPUS = 4096
XAPIC_MAX_ID = 254       # 255 is the xAPIC broadcast ID


@dataclass(frozen=True)
class Machine:
    cpus: int
    sockets: int
    cores: int
    threads: int
    numa: int = 1
    profile: str = "intel"
    x2apic: bool = False
    tcg: str = "single"
    memory_mb: int = 0
    # How many of the `cpus` vCPUs sit at the topology's last slots
    # (cold-plugged there) instead of after the first ones; the slots in
    # between are possible CPUs, not present. Few vCPUs then reach the
    # highest APIC IDs of a large topology.
    high: int = 0

    @property
    def topology(self) -> str:
        return f"{self.sockets}x{self.cores}x{self.threads}"

    @property
    def slots(self) -> int:
        return self.sockets * self.cores * self.threads

    def slot(self, index: int) -> Tuple[int, int, int]:
        """Socket, core and thread of QEMU's CPU index `index`."""
        return (index // (self.cores * self.threads),
                index // self.threads % self.cores, index % self.threads)

    def present(self) -> List[int]:
        """QEMU's CPU indexes of the vCPUs the machine starts with."""
        low = self.cpus - self.high
        return list(range(low)) + list(range(self.slots - self.high,
                                             self.slots))

    def linux_topologies(self) -> List[Tuple[int, int, int]]:
        """Packages, cores and threads per core a guest may count with
        every vCPU online. QEMU's AMD profile has no TOPOEXT ("This
        family of AMD CPU doesn't support hyperthreading(2)", QEMU
        warns): Linux 6.1 then sees each thread as a core, while 6.12's
        topology code finds the threads in CPUID leaf 0xB (measured,
        2x4x2: 6.1 counts 16 cores, 6.12 8 cores of 2 threads)."""
        slots = [self.slot(i) for i in self.present()]
        packages = len({sock for sock, _, _ in slots})
        per_core: Dict[Tuple[int, int], int] = {}
        for sock, core, _ in slots:
            per_core[sock, core] = per_core.get((sock, core), 0) + 1
        told = (packages, len(per_core), max(per_core.values()))
        if self.profile == "amd" and self.threads > 1:
            return [told, (packages, self.cpus, 1)]
        return [told]

    def memory(self) -> int:
        mem = self.memory_mb or max(512, 256 + 16 * self.cpus)
        return mem - mem % self.numa

    def apic_id(self, index: int) -> int:
        """The APIC ID QEMU gives CPU index `index` (fields rounded to
        powers of 2)."""
        tbits = (self.threads - 1).bit_length()
        cbits = (self.cores - 1).bit_length()
        sock, core, thread = self.slot(index)
        return (sock << (cbits + tbits)) | (core << tbits) | thread

    def max_apic_id(self) -> int:
        """Highest APIC ID of a present vCPU."""
        return self.apic_id(self.present()[-1])

    def needs_iommu(self) -> bool:
        """x2APIC mode in a TCG guest needs interrupt remapping: without it
        Linux keeps (or falls back to) xAPIC mode."""
        return self.x2apic

    def node_cpus(self) -> List[Tuple[int, int]]:
        """First and last CPU index of each NUMA node (whole cores)."""
        per = self.cpus // self.numa
        return [(i * per, (i + 1) * per - 1) for i in range(self.numa)]

    def qemu_argv(self, kernel: Path, initrd: Optional[Path],
                  cmdline: str,
                  monitor: Optional[List[str]] = None) -> List[str]:
        cpu = PROFILES[self.profile] + (",x2apic=on" if self.x2apic
                                        else ",x2apic=off")
        smp = (f"{self.cpus - self.high},sockets={self.sockets},"
               f"cores={self.cores},threads={self.threads}")
        if self.cpus < self.slots:
            smp += f",maxcpus={self.slots}"
        argv = ["qemu-system-x86_64", "-machine", "q35",
                "-accel", f"tcg,thread={self.tcg}",
                "-cpu", cpu,
                "-smp", smp,
                "-m", f"{self.memory()}M",
                "-nodefaults", "-display", "none", "-serial", "stdio",
                *(monitor or ["-monitor", "none"]), "-no-reboot",
                # S3 for the guest's suspend step (woken by the RTC).
                "-global", "ICH9-LPC.disable_s3=0",
                "-kernel", str(kernel), "-append", cmdline]
        if initrd:
            argv += ["-initrd", str(initrd)]
        # -cpu's properties apply to every CPU of its type, these too.
        cpu_type = PROFILES[self.profile].split(",")[0] + "-x86_64-cpu"
        for index in self.present()[self.cpus - self.high:]:
            sock, core, thread = self.slot(index)
            argv += ["-device", f"{cpu_type},socket-id={sock},"
                     f"core-id={core},thread-id={thread}"]
        if self.needs_iommu():
            argv += ["-device", "intel-iommu,intremap=on,eim=on"]
        if self.numa > 1:
            size = self.memory() // self.numa
            for node, (first, last) in enumerate(self.node_cpus()):
                argv += ["-object",
                         f"memory-backend-ram,id=mem{node},size={size}M",
                         "-numa", f"node,nodeid={node},cpus={first}-{last},"
                         f"memdev=mem{node}"]
        return argv


def parse_topology(text: str) -> Tuple[int, int, int]:
    match = re.fullmatch(r"(\d+)x(\d+)x(\d+)", text)
    if not match:
        raise UsageError(f"topology '{text}' is not SOCKETSxCORESxTHREADS "
                         "(e.g. 2x8x2)")
    sockets, cores, threads = (int(g) for g in match.groups())
    if min(sockets, cores, threads) < 1:
        raise UsageError(f"topology '{text}' has a zero field")
    return sockets, cores, threads


def make(cpus: int, topology: Optional[str] = None, numa: int = 1,
         profile: str = "intel", x2apic: Optional[bool] = None,
         tcg: str = "single", memory_mb: int = 0,
         nr_cpus: int = 512, high: int = 0) -> Machine:
    """Validate the request and build a Machine (UsageError if impossible).

    Without a topology every CPU is its own socket (QEMU's plain -smp N).
    With `high`, that many of the CPUs take the topology's last slots and
    the topology may have more slots than CPUs. x2APIC defaults to on
    exactly when APIC IDs need it.
    """
    if profile not in PROFILES:
        raise UsageError(f"unknown profile '{profile}' (known: "
                         f"{', '.join(PROFILES)})")
    if tcg not in TCG_MODES:
        raise UsageError(f"unknown TCG mode '{tcg}' (single or multi)")
    if cpus < 1:
        raise UsageError("--cpus must be at least 1")
    sockets, cores, threads = (parse_topology(topology) if topology
                               else (cpus, 1, 1))
    slots = sockets * cores * threads
    if not high and slots != cpus:
        raise UsageError(f"topology {sockets}x{cores}x{threads} is "
                         f"{slots} CPUs, not --cpus {cpus}")
    if high and not 0 < high < cpus <= slots:
        raise UsageError(f"--high {high}: between 1 and --cpus - 1, and "
                         f"--cpus {cpus} at most the topology's {slots}")
    if high and numa > 1:
        raise UsageError("--high needs --numa 1")
    # Cold-plugged or not, every slot is a CPU to QEMU and to the guest.
    what = (f"topology {sockets}x{cores}x{threads} has {slots} CPU slots"
            if high else f"{cpus} vCPUs")
    if slots > MAX_VCPUS:
        raise UsageError(f"{what}: the lab's q35 machine allows at most "
                         f"{MAX_VCPUS}")
    if slots > nr_cpus:
        raise UsageError(f"{what} but the kernel has NR_CPUS={nr_cpus}")
    if numa < 1 or numa > 4 or numa > cpus:
        raise UsageError(f"--numa {numa}: between 1 and min(4, cpus)")
    if (sockets * cores) % numa:
        raise UsageError(f"--numa {numa} does not divide the "
                         f"{sockets * cores} cores evenly")
    mach = Machine(cpus, sockets, cores, threads, numa, profile,
                   False, tcg, memory_mb, high)
    need = mach.max_apic_id() > XAPIC_MAX_ID
    if x2apic is None:
        x2apic = need
    if need and not x2apic:
        raise UsageError(f"topology {mach.topology} has APIC ID "
                         f"{mach.max_apic_id()} > {XAPIC_MAX_ID}: needs "
                         "--x2apic")
    return Machine(cpus, sockets, cores, threads, numa, profile, x2apic,
                   tcg, memory_mb, high)
