"""Why pods wait and where they are in line: the pending list of a queue, and one pod's story.

A leaf queue serves its applications in the order of its sort policy (priority first unless
disabled, then submission time, or the share of the cluster in use for `fair`; disabled,
priority only breaks their ties), and each application its pods by priority, then creation
time. That is the order the scheduling cycle
tries them in once something changes (a pod ends, a node comes, a limit moves); a pod already
tried and parked keeps its place. `position` counts from 1 within the leaf queue.

Each waiting pod carries the first rule that held it on its last try (`blockedBy`, one of
`core.cycle`'s rule names or `not-queued`) and the reason in words, with the per-filter node
counts for `no-node-fits`. A pod not tried yet has neither.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from core.dao import epoch_ns
from core.lifecycle import NOT_QUEUED
from core.objects.application import Application
from core.objects.application_order import SortKey
from core.objects.queue import Queue
from core.policies import order_queues, sort_key
from core.reservations.view import explain_reservation
from core.state import CoreState

NOT_TRIED = "not-tried-yet"


def _best_priority(app: Application) -> int:
    """The priority `policies.application_key` reads with every pending ask counted: the order
    once parked asks may run again (that key reads only the asks that may run now)."""
    return max((ask.priority for ask in app.asks.values()), default=0)


def line_key(leaf: Queue, cluster: dict[str, int]) -> Callable[[Application], SortKey]:
    """The leaf's order of its applications with every pending pod counted (as the pending list
    and the autoscaler view read the line)."""
    return sort_key(leaf, _best_priority, cluster)


def leaves_in_line(state: CoreState, queue: Queue) -> list[Queue]:
    """The leaves under `queue` in the order the cycle walks them now; where queue priorities
    order siblings, ranked (as `_best_priority` ranks applications) with every pending pod counted."""
    if queue.is_leaf:
        return [queue]
    by_priority = state.partition.queue_priorities and queue.app_sort_priority
    children = order_queues(queue.children.values(), state.partition.cluster_capacity, by_priority)
    return [leaf for child in children for leaf in leaves_in_line(state, child)]


Row = tuple[int, tuple[Any, ...], tuple[int, float, str], dict[str, Any]]


def pending_rows(state: CoreState, path: str) -> list[Row] | None:
    """What the pending list needs, read under the scheduler's lock (cheap: no sorting here).
    None when there is no such queue."""
    queue = state.partition.find_queue(path)
    if queue is None:
        return None
    cluster = dict(state.partition.cluster_capacity)
    rows: list[Row] = []
    for index, leaf in enumerate(leaves_in_line(state, queue)):
        key = line_key(leaf, cluster)
        for app in leaf.pending_apps.values():
            app_key = key(app)
            for ask in app.asks.values():
                doc = {
                    "allocationKey": ask.key,
                    "name": ask.display_name,
                    "applicationID": app.app_id,
                    "queueName": leaf.path,
                    "user": app.user.user,
                    "priority": ask.priority,
                    "requestTime": ask.created,
                    "blockedBy": state.rules.get(ask.key, ""),
                    "reason": state.reasons.get(ask.key, ""),
                }
                rows.append((index, app_key, (-ask.priority, ask.created, ask.key), doc))
    return rows


def pending_from_rows(rows: list[Row]) -> list[dict[str, Any]]:
    """The pending list, in line order, with positions counted per leaf queue."""
    docs: list[dict[str, Any]] = []
    position, leaf = 0, -1
    for index, _, _, doc in sorted(rows, key=lambda row: row[:3]):
        position = position + 1 if index == leaf else 1
        leaf = index
        docs.append(
            {
                "position": position,
                **doc,
                "priority": str(doc["priority"]),
                "requestTime": epoch_ns(doc["requestTime"]),
            }
        )
    return docs


def explain_document(state: CoreState, pod: str, now: float = 0.0) -> dict[str, Any] | None:
    """One pod, by uid or `namespace/name`: where it is in line and what holds it (or where it
    runs); for a pod with a reserved node, the node and when it frees (`reservation`, seconds
    from `now`). It builds its leaf's whole line under the lock: for people, not for polling."""
    key = pod if pod in state.ask_app else _key_of_name(state, pod)
    if key is not None:
        rows = pending_rows(state, state.ask_app[key].queue_path) or []
        line = pending_from_rows(rows)
        doc = next(d for d in line if d["allocationKey"] == key)
        reservation = explain_reservation(state, key, now)
        extra = {"reservation": reservation} if reservation is not None else {}
        return {**doc, "state": "Pending", "waiting": len(line), **extra}
    for key, unplaced in state.unplaced.items():
        if pod in (key, unplaced.ask.name):
            return {
                "allocationKey": key,
                "name": unplaced.ask.display_name,
                "applicationID": unplaced.ask.application_id,
                "queueName": unplaced.ask.queue or "",
                "state": "NotQueued",
                "position": None,
                "waiting": None,
                "priority": str(unplaced.ask.priority),
                "requestTime": epoch_ns(unplaced.ask.created),
                "blockedBy": state.rules.get(key, "not-queued"),
                "reason": unplaced.reason,
            }
    for allocation in state.allocations.values():
        if pod in (allocation.key, allocation.name):
            return {
                "allocationKey": allocation.key,
                "name": allocation.display_name,
                "applicationID": allocation.application_id,
                "queueName": allocation.queue_path,
                "state": "Placed",
                "nodeId": allocation.node_id,
                "position": None,
                "waiting": None,
                "blockedBy": "",
                "reason": f"placed on node {allocation.node_id}",
            }
    return None


def _key_of_name(state: CoreState, name: str) -> str | None:
    for key, app in state.ask_app.items():
        ask = app.asks.get(key)
        if ask is not None and ask.name == name:
            return key
    return None


def count_by_rule(state: CoreState) -> dict[str, int]:
    rules = state.rules
    counts = Counter(rules.get(key, NOT_TRIED) for key in state.ask_app)
    counts.update(rules.get(key, NOT_QUEUED) for key in state.unplaced)
    return dict(counts)
