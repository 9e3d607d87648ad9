"""guest/init's topology() under busybox, against fake sysfs trees.

busybox comes with the lab's packages (busybox-static), which `make
check` installs before the unit tests: no busybox is a failure here.
"""
import subprocess
from pathlib import Path
from typing import Dict, Optional

INIT = Path(__file__).parent.parent / "guest" / "init"
BUSYBOX = "/bin/busybox"


def topology_function() -> str:
    text = INIT.read_text()
    start = text.index("topology() {")
    return text[start:text.index("\n}\n", start) + 3]


def fake_sysfs(root: Path, online: str, cpus: Dict[int, Dict[str, str]]
               ) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "online").write_text(online + "\n")
    for cpu, files in cpus.items():
        topo = root / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        for name, value in files.items():
            (topo / name).write_text(value + "\n")


def machine_2x2x2(skip: Optional[int] = None) -> Dict[int, Dict[str, str]]:
    """8 CPUs, 2 packages of 2 cores of 2 threads, all masks right."""
    out = {}
    for cpu in range(8):
        if cpu == skip:
            continue
        core, pkg = cpu // 2, cpu // 4
        out[cpu] = {"physical_package_id": str(pkg), "die_id": "0",
                    "core_id": str(core),
                    "thread_siblings_list": f"{core * 2}-{core * 2 + 1}",
                    "die_cpus_list": f"{pkg * 4}-{pkg * 4 + 3}",
                    "package_cpus_list": f"{pkg * 4}-{pkg * 4 + 3}"}
    return out


def run(root: Path) -> str:
    script = topology_function() + "topology\n"
    return subprocess.run([BUSYBOX, "sh", "-c", script],
                          capture_output=True, text=True, check=True,
                          env={"LAB_CPU_SYSFS": str(root),
                               "PATH": "/usr/bin:/bin"}).stdout.strip()


def test_right_masks_pass_and_are_counted(tmp_path):
    fake_sysfs(tmp_path, "0-7", machine_2x2x2())
    assert run(tmp_path) == "topology=ok packages=2 cores=4 threads=2"


def test_a_wrong_thread_sibling_fails(tmp_path):
    cpus = machine_2x2x2()
    cpus[5]["thread_siblings_list"] = "5"
    fake_sysfs(tmp_path, "0-7", cpus)
    assert run(tmp_path).startswith("topology=cpu5:thread_siblings ")


def test_an_offline_cpu_left_in_the_masks_fails(tmp_path):
    """CPU 7, the highest, offline and gone from sysfs, still in the
    masks of CPU 6 and its package."""
    fake_sysfs(tmp_path, "0-6", machine_2x2x2(skip=7))
    assert run(tmp_path).startswith("topology=cpu4:die_cpus ")


def test_an_online_cpu_without_topology_fails(tmp_path):
    fake_sysfs(tmp_path, "0-7", machine_2x2x2(skip=7))
    assert run(tmp_path).startswith("topology=cpu7:no_topology ")
