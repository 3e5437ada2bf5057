"""`herder bench`: how fast Herder decides and binds, measured on synthetic clusters.

`scheduling.py` times the real core in process (and the user/group-limit comparison), `quota.py`
times elastic-quota runtime recomputes, and `emulator.py` with `emulator_process.py` time the whole
Kubernetes shim against kmock's API emulator (a source checkout with the dev extra). None of it is
part of the scheduler at run time, and the container image leaves this package out.
"""
