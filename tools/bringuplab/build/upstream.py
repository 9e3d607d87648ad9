"""Upstream Linux 6.12 (Debian linux-source-6.12), built with our config
fragments, as the benchmark's reference."""
from bringuplab.build import base as basemod, kernel, tree
from bringuplab.paths import BUILD, UPSTREAM_FILE

UP_TREE = BUILD / "upstream" / "linux"


def build(config: str = "guest") -> kernel.Kernel:
    """Unpack (once) and build upstream's bzImage with flavour `config`;
    the Kernel built."""
    if not tree.is_tree(UP_TREE):
        pin = basemod.load(UPSTREAM_FILE)
        tree.unpack(basemod.fetch(pin), UP_TREE)
    return kernel.build(config, UP_TREE, UP_TREE.parent / f"out-{config}",
                        tag="-upstream")
