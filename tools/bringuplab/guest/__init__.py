"""Stage 2, kernel -> initramfs -> QEMU -> log: the guest's initramfs or
Debian image (initramfs.py, image.py), the machine it runs on
(machine.py, machinespec.py) and one boot of it to a console log
(boot.py, with monitor.py and milestone.py watching QEMU and the
console)."""
