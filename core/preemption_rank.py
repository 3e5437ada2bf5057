"""Which node's victims to take when preemption could make room on several: kube-scheduler's order.

kube-scheduler's DefaultPreemption compares the nodes where evicting lower-priority pods would
let a pod in, and takes, in this order, the node whose victims

1. break the fewest PodDisruptionBudgets,
2. have the lowest highest priority,
3. have the smallest sum of priorities, each counted above the lowest possible priority, so
   that every victim adds to the sum and a longer list of low-priority pods can weigh more than
   a shorter one,
4. are the fewest,
5. started latest, comparing the earliest start among each node's highest-priority victims
   (the work lost is the youngest),

and then the first node. Herder uses this order for priority preemption inside an elastic quota,
and after YuniKorn's own rules (pods that asked not to be preempted go last) for preemption
across queues.
"""

from __future__ import annotations

from collections.abc import Iterable

LOWEST_PRIORITY = -(2**31)  # int32's lowest: every victim's priority counts above it

Rank = tuple[int, int, int, int, float]


def victims_rank(victims: Iterable[tuple[int, float]], violations: int = 0) -> Rank:
    """The rank of one node's victims, given as (priority, start time) pairs: lower is better."""
    listed = list(victims)
    if not listed:
        return (violations, LOWEST_PRIORITY, 0, 0, 0.0)
    top = max(priority for priority, _ in listed)
    total = sum(priority - LOWEST_PRIORITY for priority, _ in listed)
    earliest_top = min(start for priority, start in listed if priority == top)
    return (violations, top, total, len(listed), -earliest_top)
