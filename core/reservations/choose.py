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
from core.objects.pod_topology import Mask
from core.reservations.timing import frees_at, shortfall
from core.resources import Resource
from core.state import CoreState

NOTHING = Resource()


def plan_nodes(
    state: CoreState, app_id: str, asks: Sequence[Ask], now: float, timed: bool
) -> dict[str, tuple[str, float]] | None:
    """For each ask, the node to reserve and the earliest start there (`timing.NEVER` when no
    deadline promises one); None when one of them finds no node. `timed`: `timing.any_timed`.

    A gang's placeholders are alike (one request, one set of constraints, no rules between
    pods): the nodes are read once for all of them (`_Alike`), and for each only the nodes the
    plan already takes room on are read again."""
    planned: dict[str, Resource] = {}  # room this plan takes per node so far
    out: dict[str, tuple[str, float]] = {}
    alike: _Alike | None = None
    for ask in asks:
        rules = pod_rule_masks(state, ask)
        if rules is None:
            if alike is None or alike.request != ask.resource or alike.constraints != ask.constraints:
                alike = _Alike(state, app_id, ask, now, timed)
            best = alike.best(planned)
        else:
            best = _best(state, app_id, _candidates(state, app_id, ask, rules, planned), now, timed)
        if best is None:
            return None
        node_id, start = best
        planned[node_id] = planned.get(node_id, NOTHING) + ask.resource
        out[ask.key] = (node_id, start)
    return out


Candidate = tuple[float, int, str, Resource, Resource]  # shortfall, position, node, need, kept


def _candidates(
    state: CoreState,
    app_id: str,
    ask: Ask,
    rules: list[tuple[str, Mask]] | None,
    planned: Mapping[str, Resource],
    only: Mapping[str, int] | None = None,
) -> list[Candidate]:
    """The nodes the ask may reserve, with what must still free there (`only`: just these
    nodes, at these positions in the node index's order)."""
    book = state.reservations
    partition = state.partition
    index = partition.node_index
    if only is None:
        listed: Iterable[tuple[int, str]] = enumerate(index.could_hold(ask.resource, ask.constraints))
    else:
        listed = ((position, node_id) for node_id, position in only.items())
    candidates: list[Candidate] = []
    for position, node_id in listed:
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
    return candidates


def _untouched(state: CoreState, app_id: str, ask: Ask) -> list[Candidate]:
    """`_candidates` for an ask without rules between pods before the plan takes room: the
    shortfall of a node no application reserves comes from the node index's columns."""
    book = state.reservations
    nodes = state.partition.nodes
    names, shorts = state.partition.node_index.shortfalls(ask.resource, ask.constraints)
    candidates: list[Candidate] = []
    for position, (node_id, short) in enumerate(zip(names, shorts, strict=True)):
        owner = book.owner(node_id)
        if owner is None:
            candidates.append((short, position, node_id, ask.resource, NOTHING))
        elif owner == app_id:
            kept = book.kept_on(node_id, app_id)
            need = ask.resource + kept if kept else ask.resource
            candidates.append((shortfall(nodes[node_id], need, kept), position, node_id, need, kept))
    return candidates


def _best(
    state: CoreState, app_id: str, candidates: list[Candidate], now: float, timed: bool
) -> tuple[str, float] | None:
    partition = state.partition
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


class _Alike:
    """The nodes as asks of one request and one set of constraints see them before the plan
    takes room anywhere: a node the plan has not touched answers every such ask the same, so
    it is read once (its start too, when first needed)."""

    def __init__(self, state: CoreState, app_id: str, ask: Ask, now: float, timed: bool) -> None:
        self.state, self.app_id, self.ask, self.now, self.timed = state, app_id, ask, now, timed
        self.request, self.constraints = ask.resource, ask.constraints
        candidates = _untouched(state, app_id, ask)
        self.positions = {entry[2]: entry[1] for entry in candidates}
        self.starts: dict[str, float | None] = {}
        if timed:
            ranked = []
            for short, position, node_id, need, kept in candidates:
                start = frees_at(state, state.partition.nodes[node_id], need, app_id, now, kept)
                if start is not None:
                    ranked.append((start, short, position, node_id))
            ranked.sort()
            self.ranked = ranked
        else:
            candidates.sort(key=lambda entry: entry[:2])
        self.candidates = candidates
        self.first = 0  # the entries before it can hold none of these asks

    def best(self, planned: Mapping[str, Resource]) -> tuple[str, float] | None:
        """What `_best` answers for the ask with the plan so far taking `planned`."""
        touched = {node_id: self.positions[node_id] for node_id in planned if node_id in self.positions}
        again = _candidates(self.state, self.app_id, self.ask, None, planned, touched) if touched else []
        if self.timed:
            base = next((entry for entry in self.ranked if entry[3] not in planned), None)
            fresh = _best(self.state, self.app_id, again, self.now, True)
            if fresh is None:
                return (base[3], base[0]) if base is not None else None
            chosen, at = fresh
            entry = next(e for e in again if e[2] == chosen)
            if base is None or (at, entry[0], entry[1], chosen) < base:
                return fresh
            return base[3], base[0]
        again.sort(key=lambda entry: entry[:2])
        checked = 0  # the touched nodes tried so far (they come in order)
        candidates = self.candidates
        index = self.first
        while index < len(candidates):
            short, position, node_id, need, kept = candidates[index]
            index += 1
            if node_id in planned:
                continue
            while checked < len(again) and again[checked][:2] < (short, position):
                found = self._try(again[checked])
                checked += 1
                if found is not None:
                    return found
            start = self._untouched_start(node_id, short, need, kept)
            if start is not None:
                return node_id, start
            if index - 1 == self.first:
                self.first = index  # never fits: no later ask of these need read it
        for entry in again[checked:]:
            found = self._try(entry)
            if found is not None:
                return found
        return None

    def _untouched_start(self, node_id: str, short: float, need: Resource, kept: Resource) -> float | None:
        if node_id not in self.starts:
            node = self.state.partition.nodes[node_id]
            self.starts[node_id] = (
                self.now if short == 0 else frees_at(self.state, node, need, self.app_id, self.now, kept)
            )
        return self.starts[node_id]

    def _try(self, entry: Candidate) -> tuple[str, float] | None:
        short, _, node_id, need, kept = entry
        node = self.state.partition.nodes[node_id]
        start: float | None = self.now if short == 0 else frees_at(self.state, node, need, self.app_id, self.now, kept)
        return (node_id, start) if start is not None else None


def describe_start(start: float, now: float) -> str:
    """`by about t+40 s` or `when pods without a deadline end`, for reasons and events."""
    if math.isinf(start):
        return "when pods there without activeDeadlineSeconds end"
    return f"by about t+{max(0.0, start - now):.0f} s (the deadlines of the pods that must leave)"


def nodes_text(node_ids: Iterable[str]) -> str:
    names = sorted(set(node_ids))
    return f"node {names[0]}" if len(names) == 1 else "nodes " + ", ".join(names)
