"""The parallel CPU bringup lab.

Data flows one way, a subpackage per stage (README: base -> kernel ->
initramfs -> QEMU -> log -> verdict -> report):

- build/: base -> kernel (and the Debian package)
- guest/: initramfs or Debian image -> QEMU -> console log
- verdict/: console log -> verdict
- report/: verdicts -> records and their tables
- runs/: the runs that drive these stages (check, matrix, soak, bench...)
- host/: the packages the lab installs and the host it describes

cli.py is `tools/bringup`; errors, paths, progress and run are shared.
"""
