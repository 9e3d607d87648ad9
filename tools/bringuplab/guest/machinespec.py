"""One emulated machine as it is asked for (MachineSpec): by the command
line, a matrix entry or a bench suite. Its name, its command-line
options, and the validated machine.Machine it makes."""
import argparse
from dataclasses import dataclass
from typing import List, Optional

from bringuplab.guest import machine
from bringuplab.guest.machine import PROFILES, TCG_MODES, Machine


@dataclass(frozen=True)
class MachineSpec:
    cpus: int
    # SOCKETSxCORESxTHREADS; None: one socket per vCPU (QEMU's -smp N)
    topology: Optional[str] = None
    numa: int = 1
    profile: str = "intel"         # machine.PROFILES
    # None: on exactly when the APIC IDs need it
    x2apic: Optional[bool] = None
    tcg: str = "single"            # machine.TCG_MODES
    memory_mb: int = 0             # 0: by the vCPU count
    high: int = 0                  # see machine.Machine.high

    @property
    def name(self) -> str:
        """The machine in one word group, e.g. "64=2x16x2 numa2 single
        intel": the `machine` column of bench and compare (the records
        of earlier runs name theirs alike)."""
        text = (f"{self.cpus}={self.topology or f'{self.cpus}x1x1'} "
                f"numa{self.numa} {self.tcg} {self.profile}")
        if self.x2apic is not None:
            text += " x2apic" if self.x2apic else " xapic"
        if self.high:
            text += f" high{self.high}"
        if self.memory_mb:
            text += f" {self.memory_mb}M"
        return text

    def make(self, nr_cpus: int = 512) -> Machine:
        """The machine, validated (machine.make: UsageError if it cannot
        be) for a kernel of NR_CPUS `nr_cpus`."""
        return machine.make(self.cpus, self.topology, self.numa,
                            self.profile, self.x2apic, self.tcg,
                            self.memory_mb, nr_cpus=nr_cpus, high=self.high)

    def options(self, default: "MachineSpec") -> List[str]:
        """The command-line options that ask for this machine where
        `default` is the default one (add_options)."""
        out: List[str] = []
        if self.cpus != default.cpus:
            out += ["--cpus", str(self.cpus)]
        if self.topology != default.topology:
            out += ["--topology", self.topology or f"{self.cpus}x1x1"]
        for flag, mine, theirs in (("--numa", self.numa, default.numa),
                                   ("--profile", self.profile,
                                    default.profile),
                                   ("--tcg", self.tcg, default.tcg),
                                   ("--memory", self.memory_mb,
                                    default.memory_mb),
                                   ("--high", self.high, default.high)):
            if mine != theirs:
                out += [flag, str(mine)]
        if self.x2apic != default.x2apic and self.x2apic is not None:
            out.append("--x2apic" if self.x2apic else "--no-x2apic")
        return out


# The round-robin target machine: 64 vCPUs, 2 sockets of 16 cores with
# SMT 2, 2 NUMA nodes (the default of compare and states, bench rr64).
SERVER = MachineSpec(64, "2x16x2", 2)


def of(mach: Machine) -> MachineSpec:
    """The spec that makes `mach` (x2APIC as it was decided)."""
    return MachineSpec(mach.cpus, mach.topology, mach.numa, mach.profile,
                       mach.x2apic, mach.tcg, mach.memory_mb, mach.high)


def add_options(parser: argparse.ArgumentParser,
                default: MachineSpec) -> None:
    """The machine options of a command, `default` their defaults."""
    group = parser.add_argument_group(
        "machine", "the emulated machine (QEMU q35, TCG)")
    group.add_argument("--cpus", type=int, default=default.cpus,
                       metavar="N", help="vCPUs (default: %(default)s)")
    group.add_argument("--topology", default=default.topology,
                       metavar="SxCxT", help="SOCKETSxCORESxTHREADS, e.g. "
                       "2x8x2 (default: " + ("%(default)s" if default.topology
                                             else "one socket per vCPU")
                       + ")")
    group.add_argument("--numa", type=int, default=default.numa,
                       metavar="N", help="NUMA nodes, 1-4, splitting the "
                       "cores evenly (default: %(default)s)")
    group.add_argument("--profile", choices=list(PROFILES),
                       default=default.profile,
                       help="CPU vendor: intel (family 6 model 85) or amd "
                       "(family 0x17) (default: %(default)s)")
    apic = group.add_mutually_exclusive_group()
    apic.add_argument("--x2apic", dest="x2apic", action="store_true",
                      default=default.x2apic,
                      help="x2APIC, with interrupt remapping (default: "
                      "only when APIC IDs above 254 need it)")
    apic.add_argument("--no-x2apic", dest="x2apic", action="store_false",
                      help="xAPIC")
    group.add_argument("--tcg", choices=list(TCG_MODES),
                       default=default.tcg, help="one host thread for "
                       "every vCPU (single) or one each (multi) (default: "
                       "%(default)s)")
    group.add_argument("--memory", type=int, default=default.memory_mb,
                       metavar="MIB", help="guest memory (default: "
                       "%(default)s: 256 + 16 per vCPU, at least 512)")
    group.add_argument("--high", type=int, default=default.high,
                       metavar="N", help="N of the --cpus take the "
                       "topology's last slots (highest APIC IDs), the rest "
                       "its first; the slots between are possible CPUs, "
                       "not present (default: %(default)s)")


def from_args(args: argparse.Namespace) -> MachineSpec:
    """The machine add_options' options ask for; UsageError if it
    cannot be made (for a kernel of up to 512 CPUs)."""
    spec = MachineSpec(args.cpus, args.topology, args.numa, args.profile,
                       args.x2apic, args.tcg, args.memory, args.high)
    spec.make()
    return spec
