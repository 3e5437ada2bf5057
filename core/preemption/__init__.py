"""Preemption across queues: YuniKorn's guaranteed-based preemption and its seven laws.

`queues` holds the laws about queues (who may trigger, who may lose pods, fences), `victims`
chooses the fewest pods on one node, `preemptor` runs the search once per scheduling cycle
and keeps the freed room for the preemptor until it is bound.
"""
