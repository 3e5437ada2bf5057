"""Preemption across queues: YuniKorn's guaranteed-based preemption and its seven laws.

`queues` holds the laws about queues (who may trigger, who may lose pods, fences, where the
search looks and how much must leave under a max), `victims` chooses the fewest pods that make
room, `preemptor` runs the search once per scheduling cycle and keeps the freed room for the
preemptor until it is bound (`holds`: on its node; `held_room`: under its queues' maxes, as
the placement path reads it).
"""
