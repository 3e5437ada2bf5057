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
from collections.abc import Iterable, Mapping, Sequence

from core.fit import pod_rule_masks
from core.objects.ask import Ask
from core.reservations.timing import frees_at, shortfall
from core.resources import Resource
from core.state import CoreState

NOTHING = Resource()


def plan_nodes(
    state: CoreState, app_id: str, asks: Sequence[Ask], now: float, timed: bool
) -> dict[str, tuple[str, float]] | None:
    """For each ask, the node to reserve and the earliest start there (`timing.NEVER` when no
    deadline promises one); None when one of them finds no node. `timed`: `timing.any_timed`."""
    planned: dict[str, Resource] = {}  # room this plan takes per node so far
    out: dict[str, tuple[str, float]] = {}
    for ask in asks:
        best = _best_node(state, app_id, ask, planned, now, timed)
        if best is None:
            return None
        node_id, start = best
        planned[node_id] = planned.get(node_id, NOTHING) + ask.resource
        out[ask.key] = (node_id, start)
    return out


def _best_node(
    state: CoreState, app_id: str, ask: Ask, planned: Mapping[str, Resource], now: float, timed: bool
) -> tuple[str, float] | None:
    book = state.reservations
    partition = state.partition
    index = partition.node_index
    rules = pod_rule_masks(state, ask)
    candidates: list[tuple[float, int, str, Resource, Resource]] = []
    for position, node_id in enumerate(index.could_hold(ask.resource, ask.constraints)):
        owner = book.owner(node_id)
        if owner is not None and owner != app_id:
            continue
        if rules is not None:
            pos = index.position(node_id)
            if pos is None or not all(mask[pos] for _, mask in rules):
                continue
        kept = book.kept_on(node_id, app_id) if owner is not None else NOTHING
        need = ask.resource
        if node_id in planned or kept:
            # the application's own room on the node (this plan's, its reservations') stays its own
            need = need + planned.get(node_id, NOTHING) + kept
        candidates.append((shortfall(partition.nodes[node_id], need, kept), position, node_id, need, kept))
    if not timed:
        # No pod has a deadline: a node's start is now (nothing short) or never promised, so
        # the least shortfall wins; only the nodes tried in that order are read pod by pod.
        candidates.sort(key=lambda entry: entry[:2])
        for short, _, node_id, need, kept in candidates:
            start = now if short == 0 else frees_at(state, partition.nodes[node_id], need, app_id, now, kept)
            if start is not None:
                return node_id, start
        return None
    best: tuple[float, float, int, str] | None = None
    for short, position, node_id, need, kept in candidates:
        start = frees_at(state, partition.nodes[node_id], need, app_id, now, kept)
        if start is not None and (best is None or (start, short, position, node_id) < best):
            best = (start, short, position, node_id)
    return (best[3], best[0]) if best is not None else None


def describe_start(start: float, now: float) -> str:
    """`by about t+40 s` or `when pods without a deadline end`, for reasons and events."""
    if math.isinf(start):
        return "when pods there without activeDeadlineSeconds end"
    return f"by about t+{max(0.0, start - now):.0f} s (the deadlines of the pods that must leave)"


def nodes_text(node_ids: Iterable[str]) -> str:
    names = sorted(set(node_ids))
    return f"node {names[0]}" if len(names) == 1 else "nodes " + ", ".join(names)
