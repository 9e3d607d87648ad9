"""Stage 1, base -> kernel: the pinned Debian base tree with the series
applied (base.py, tree.py, worktree.py, upstream.py), guest configs
(kconfig.py), kernel builds (kernel.py, kbuild.py), checkpatch and the
Debian package (deb.py); variants.py names the kernels a bench boots."""
