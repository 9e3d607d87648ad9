"""The runs that drive the stages: make check (check.py), the fault and
topology matrix (matrix.py), soak, bench and compare, demo,
serialwork, states_report, sysboot (the Debian image), buildtest and
each_patch; logexpect.py judges a kept log as the run that wrote it
expected. Each run ends in a record (report/record.py)."""
