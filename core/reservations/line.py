"""The line a reservation keeps a place in, and who may pass it.

The pod at the *front* of a leaf queue's line is the one that may reserve (`front`): the
first pod, not held by its gang, of the leaf's first application, in the order the pending
list and `herder explain` show (`policies.sort_key` with every pending pod counted; within an
application, priority then age).

A reservation keeps its pod's place in line and nothing more, so a pod of a strictly higher
*priority* still passes it (`ahead`): in the same leaf, a pod of a higher priority than the
reserved pod's application (where `application.sort.priority` orders the leaf); in another
leaf, a pod whose queue has the higher current priority at the two queues' lowest common
ancestor (where queue priorities order siblings). Arrival order and fair shares never pass a
reservation: they are what it protects against (a queue that holds half a gang's placeholders
has the larger share, and would otherwise be passed until the stream of small pods stops).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.objects.application import Application
from core.objects.ask import Ask
from core.objects.queue import Queue
from core.objects.queue_priority import current_priority
from core.policies import sort_key
from core.state import CoreState


def app_key(leaf: Queue, app: Application, cluster: Mapping[str, int]) -> tuple[Any, ...]:
    """The application's place in its leaf's line with every pending pod counted (the cycle's
    own key reads only the pods that may run at its change counter, so it moves as pods are
    parked: the line a reservation keeps a place in is the one `herder explain` shows)."""
    return sort_key(leaf, _best, cluster)(app)


def ask_key(ask: Ask) -> tuple[int, float, str]:
    """A pod's place among its application's pods."""
    return (-ask.priority, ask.created, ask.key)


def front(state: CoreState, leaf: Queue) -> tuple[Application, Ask] | None:
    """The pod at the front of the leaf's line: the first pod, not held by its gang, of the
    first application."""
    cluster = state.partition.cluster_capacity
    best: tuple[tuple[Any, ...], Application] | None = None
    for app in leaf.pending_apps.values():
        if len(app.held) == len(app.asks):
            continue
        key = app_key(leaf, app, cluster)
        if best is None or key < best[0]:
            best = (key, app)
    if best is None:
        return None
    app = best[1]
    ask = min((a for k, a in app.asks.items() if k not in app.held), key=ask_key)
    return app, ask


def ahead(
    state: CoreState, leaf: Queue, app: Application, ask: Ask, other_leaf: Queue, other_app: Application, other: Ask
) -> bool:
    """Whether `ask` (of `app` in `leaf`) passes the reserved pod `other`: a strictly higher
    priority where priorities order the line."""
    if leaf is other_leaf:
        if not leaf.app_sort_priority:
            return False
        if app is other_app:
            return ask.priority > other.priority
        return _best(app) > _best(other_app)
    if not state.partition.queue_priorities:
        return False
    mine = list(leaf.ancestry())
    theirs: Queue | None = other_leaf
    below_theirs = other_leaf
    while theirs is not None and theirs not in mine:
        below_theirs = theirs
        theirs = theirs.parent
    if theirs is None or not theirs.app_sort_priority:
        return False
    below_mine = mine[mine.index(theirs) - 1]
    return current_priority(below_mine) > current_priority(below_theirs)


def _best(app: Application) -> int:
    return max((ask.priority for key, ask in app.asks.items() if key not in app.held), default=0)
