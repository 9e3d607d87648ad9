"""One benchmark boot as the bench and compare runs keep it."""
from dataclasses import dataclass, field
from typing import Dict, Optional

from bringuplab.host import hostcpu


@dataclass
class Sample:
    setup: str
    cpus: int
    tcg: str
    profile: str
    variant: str
    rep: int
    verdict: str
    bringup_ms: Optional[float]
    mode: Optional[str]
    log: str
    phases_us: Dict[str, int] = field(default_factory=dict)
    host_wall_ms: Optional[float] = None
    host_vcpu_ms: Optional[float] = None
    kick_total_us: Optional[int] = None
    post_bringup_ms: Optional[float] = None
    # QEMU's start to the kernel starting PID 1, by the host's clock
    # (bench.SUITE_MILESTONE; the scale suite)
    host_init_ms: Optional[float] = None

    @property
    def host_busy(self) -> Optional[float]:
        if self.host_wall_ms is None or self.host_vcpu_ms is None:
            return None
        return hostcpu.HostCpu(self.host_wall_ms, self.host_vcpu_ms).busy
