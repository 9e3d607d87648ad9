# Thin wrappers around tools/bringup; see README.md.
PYTHON := /usr/bin/python3
BRINGUP := $(PYTHON) tools/bringup

.PHONY: setup tree export kernel debug-kernel each-patch buildtest initramfs \
	deb demo check check-quick unit mutate bench bench-full soak status

setup:
	$(BRINGUP) setup

tree:
	$(BRINGUP) tree

export:
	$(BRINGUP) export

kernel: tree
	$(BRINGUP) kernel

debug-kernel: tree
	$(BRINGUP) kernel --config debug

# Build every patch with the guest and SMP=n (= HOTPLUG_CPU=n) configs, and
# boot each guest kernel on 8 vCPUs in both bringup modes
# (tools/bringuplab/runs/each_patch.py; not a git bisect, every patch in turn).
each-patch: tree
	$(BRINGUP) kernel --each --boot --config guest,nosmp

# Base vs series for many configs and arches: a build error or a new
# warning fails (long; not part of check). Record in results/.
buildtest:
	$(BRINGUP) buildtest

initramfs:
	$(BRINGUP) initramfs

# The series as a Debian package (linux-image + headers, Debian's
# cloud-amd64 config) in results/deb/, with a record (long; not in check).
deb: tree
	$(BRINGUP) deb

demo:
	$(BRINGUP) demo

check:
	$(BRINGUP) check

check-quick:
	$(BRINGUP) check --quick

unit:
	$(PYTHON) -m pytest -q tests

# Every rule of the judge broken in turn (tools/mutate): a mutant of
# judge.py, parse.py or logexpect.py no unit test kills fails the target.
mutate:
	nice $(PYTHON) tools/mutate

bench:
	$(BRINGUP) bench --suite quick

bench-full:
	$(BRINGUP) bench --suite full

soak:
	$(BRINGUP) soak

# README.md's Status section, rewritten from the newest records in records/.
status:
	$(BRINGUP) status --update README.md
