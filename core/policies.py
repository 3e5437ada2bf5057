"""Ordering policies: which queue, which application and which node go first.

- Queues (children of a parent) are ordered fairly: the child using the smallest share of its
  due (guaranteed, else max, else the cluster) goes first; ties by name. When the tree sets
  `priority.offset` or `priority.policy` anywhere and the parent's `application.sort.priority`
  is enabled, the child with the highest current priority goes first (`queue_priority`).
- Applications in a leaf follow the queue's `application.sort.policy`: `fifo` (submission
  time) or `fair` (smallest share of the cluster in use first, then submission time). With
  `application.sort.priority` enabled (the default), applications whose best pending ask has a
  higher priority go first under either policy; disabled, that priority still decides between
  applications the policy ranks equal (submitted at the same moment, or the same share), as
  YuniKorn's sorters do ("fifo first, priority second").
- Nodes follow the partition's node sort policy (see `objects/node_index.py`): `binpacking`
  (fullest fitting node) or `fair` (emptiest fitting node), with resource weights.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from core.objects.application import Application
from core.objects.application_order import ApplicationOrder, SortKey
from core.objects.node_index import BINPACKING, FAIR
from core.objects.queue import FAIR as APP_FAIR
from core.objects.queue import FIFO, Queue
from core.objects.queue_priority import current_priority

NODE_POLICIES = (BINPACKING, FAIR)
APP_POLICIES = (FIFO, APP_FAIR)


def order_queues(
    children: Iterable[Queue], cluster: Mapping[str, int], by_priority: bool = False, version: int | None = None
) -> list[Queue]:
    """Fairly; `by_priority` (queue priorities in use), highest current priority first: from the
    asks that may run at the change counter `version`, or from every pending ask without one."""
    if not by_priority:
        return sorted(children, key=lambda q: (q.usage_share(cluster), q.name))
    return sorted(children, key=lambda q: (-current_priority(q, version), q.usage_share(cluster), q.name))


def app_share(app: Application, cluster: Mapping[str, int]) -> float:
    """The application's dominant share of the cluster in use (`fair` sorting)."""
    share = 0.0
    for key, used in app.used.items():
        total = cluster.get(key)
        if total and used > 0:
            share = max(share, used / total)
    return share


def application_key(leaf: Queue, version: int, cluster: Mapping[str, int]) -> Callable[[Application], SortKey]:
    """The sort key of the leaf's applications now: smaller keys are served first."""
    return sort_key(leaf, lambda a: a.top_priority(version), cluster)


def sort_key(
    leaf: Queue, priority_of: Callable[[Application], int], cluster: Mapping[str, int]
) -> Callable[[Application], SortKey]:
    """The leaf's sort key with an application's priority read by `priority_of`: first when
    `application.sort.priority` is enabled, else right after what the policy compares."""
    if leaf.app_sort_policy == APP_FAIR:
        if leaf.app_sort_priority:
            return lambda a: (-priority_of(a), app_share(a, cluster), a.submission_time, a.app_id)
        return lambda a: (app_share(a, cluster), -priority_of(a), a.submission_time, a.app_id)
    if leaf.app_sort_priority:
        return lambda a: (-priority_of(a), a.submission_time, a.app_id)
    return lambda a: (a.submission_time, -priority_of(a), a.app_id)


def order_applications(leaf: Queue, version: int, cluster: Mapping[str, int]) -> ApplicationOrder:
    """The leaf's applications with pending asks, in the order they are served."""
    return ApplicationOrder(leaf.pending_apps.values(), application_key(leaf, version, cluster))


def app_order_depends_on_usage(leaf: Queue) -> bool:
    """Whether an allocation can reorder the leaf's applications (so a cached order expires)."""
    return leaf.app_sort_policy == APP_FAIR
