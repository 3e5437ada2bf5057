"""Gang scheduling: YuniKorn's task groups, placeholders and their Soft and Hard styles.

`spec.py` holds what a pod says (its task groups and scheduling policy parameters),
`gang.py` what the core keeps per application, `hooks.py` the few steps the scheduling cycle
and the pods' lifecycle call, and `rules.py` the checks that reject a gang too large to ever run.
"""
