"""Which nodes to reserve: where the waiting pods can start soonest.

A candidate node's constraints allow the pod (node selector, affinity, taints, a cordon), its
rules between pods allow it there now, its capacity holds it, and no other application
reserves it (a node holds one application's reservations at a time). Of those, the pod gets
the node where it can start soonest by the deadlines of the pods that must leave
(`timing.frees_at`), then the one with the least still to free, then the node index's order
(nodes without a PreferNoSchedule taint first, then by name). A node that cannot hold the
pod however long it waits (the room staying there is too large) is no candidate.

A gang's placeholders are placed on the plan one by one, each counting the room the ones
before it take on a node, and the plan holds only if every placeholder finds a node: a gang
reserves all it needs or nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from core.fit import pod_rule_masks
from core.objects.ask import Ask
from core.reservations.timing import frees_at, shortfall
from core.resources import Resource
from core.state import CoreState


def plan_nodes(state: CoreState, app_id: str, asks: Sequence[Ask], now: float) -> dict[str, tuple[str, float]] | None:
    """For each ask, the node to reserve and the earliest start there (`timing.NEVER` when no
    deadline promises one); None when one of them finds no node."""
    book = state.reservations
    partition = state.partition
    index = partition.node_index
    planned: dict[str, Resource] = {}  # room this plan takes per node so far
    out: dict[str, tuple[str, float]] = {}
    for ask in asks:
        rules = pod_rule_masks(state, ask)
        best: tuple[float, float, int, str] | None = None
        for position, node_id in enumerate(index.could_hold(ask.resource, ask.constraints)):
            owner = book.owner(node_id)
            if owner is not None and owner != app_id:
                continue
            if rules is not None:
                pos = index.position(node_id)
                if pos is None or not all(mask[pos] for _, mask in rules):
                    continue
            node = partition.nodes[node_id]
            kept = book.kept_on(node_id, app_id)
            need = ask.resource + planned.get(node_id, Resource())
            # the application's own reservations on the node stay theirs
            start = frees_at(state, node, need + kept, app_id, now, kept)
            if start is None:
                continue
            key = (start, shortfall(node, need + kept, kept), position, node_id)
            if best is None or key < best:
                best = key
        if best is None:
            return None
        start, _, _, node_id = best
        planned[node_id] = planned.get(node_id, Resource()) + ask.resource
        out[ask.key] = (node_id, start)
    return out


def describe_start(start: float, now: float) -> str:
    """`by about t+40 s` or `when pods without a deadline end`, for reasons and events."""
    if math.isinf(start):
        return "when pods there without activeDeadlineSeconds end"
    return f"by about t+{max(0.0, start - now):.0f} s (the deadlines of the pods that must leave)"


def nodes_text(node_ids: Iterable[str]) -> str:
    names = sorted(set(node_ids))
    return f"node {names[0]}" if len(names) == 1 else "nodes " + ", ".join(names)
