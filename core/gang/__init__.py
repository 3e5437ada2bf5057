"""Gang scheduling: YuniKorn's task groups, placeholders and their Soft and Hard styles.

`spec.py` holds what a pod says (its task groups, scheduling policy parameters and topology),
`gang.py` what the core keeps per application and the decision per ask, `admission.py` how a
gang's pods join, `tidy.py` the placeholders made and released and the timeouts, `rules.py`
the checks that reject a gang too large to ever run, and `topology.py` the domain (a rack, a
block) a gang with a topology is kept inside.
"""
