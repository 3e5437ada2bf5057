"""Queue priorities, as YuniKorn computes them (`priority.offset`, `priority.policy`).

- A leaf's current priority is the highest priority among its pending pods plus its offset; a
  parent's is the highest of its children's plus its offset. A queue with nothing pending has
  the lowest priority there is (int32's minimum).
- `priority.policy: fence` hides what is below: the fenced queue's priority is its offset alone
  (while anything is pending in it).
- A pod's priority as seen from a queue above it is its own priority plus the offsets of the
  queues it passes on the way up, and it becomes the fence's offset when it passes a fence.
  Preemption compares preemptor and victim at the queue they share.
- Sibling queues are served highest priority first, then fairly, when the parent's
  `application.sort.priority` is enabled (the default) and the tree sets priority keys at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from core.config.schema import PRIORITY_OFFSET, PRIORITY_POLICY
from core.objects.queue import Queue

LOWEST = -(2**31)
FENCE = "fence"
KEYS = (PRIORITY_OFFSET, PRIORITY_POLICY)


def configured(root: Queue) -> bool:
    """Whether any queue (or child template) sets a priority key: only then do queue
    priorities order sibling queues, so trees without them pay nothing for it."""
    for queue in root.walk():
        template = queue.child_template
        if any(key in queue.properties for key in KEYS) or (
            template is not None and any(key in template.properties for key in KEYS)
        ):
            return True
    return False


def offset(queue: Queue) -> int:
    raw = queue.properties.get(PRIORITY_OFFSET)
    if raw is None:
        return 0
    try:
        return int(raw)
    except ValueError:  # validation refuses such a config; a dynamic queue's template may slip by
        return 0


def is_fence(queue: Queue) -> bool:
    return queue.properties.get(PRIORITY_POLICY, "default").lower() == FENCE


def current_priority(queue: Queue, version: int | None = None) -> int:
    """The queue's priority now, from the pods pending in it (LOWEST when none is). With the
    change counter `version`, from each application's best pod that may run now (what the
    scheduling cycle orders queues by; cached per application)."""
    if queue.is_leaf:
        if version is not None:
            pending = [app.top_priority(version) for app in queue.pending_apps.values()]
        else:
            pending = [ask.priority for app in queue.pending_apps.values() for ask in app.asks.values()]
        if not pending:
            return LOWEST
        inner = max(pending)
    else:
        children = [current_priority(child, version) for child in queue.children.values() if child.pending]
        inner = max(children, default=LOWEST)
        if inner == LOWEST:
            return LOWEST
    return _passed(queue, inner)


def children_by_priority(queue: Queue, cluster: Mapping[str, int], version: int) -> Iterator[Queue]:
    """The queue's children with pending requests as `policies.order_queues(children, cluster,
    True, version)` orders them (highest priority first, then fairly), from its kept order."""
    return queue.ordered_children(cluster, lambda child: kept_priority(child, cluster, version), version)


def kept_priority(queue: Queue, cluster: Mapping[str, int], version: int) -> int:
    """`current_priority(queue, version)`, where a parent ordering its own children by priority
    reads its highest from the front of its kept order instead of asking every pending queue
    below it."""
    if queue.is_leaf or not queue.app_sort_priority:
        return current_priority(queue, version)
    first = next(children_by_priority(queue, cluster, version), None)
    inner = first.rank_in_parent() if first is not None else None
    if inner is None or inner == LOWEST:
        return LOWEST
    return _passed(queue, inner)


def seen_from(priority: int, leaf: Queue, top: Queue) -> int:
    """A pod's priority in `leaf` as `top` (one of the leaf's ancestors, or the leaf) sees it."""
    for queue in leaf.ancestry():
        if queue is top:
            break
        priority = _passed(queue, priority)
    return priority


def _passed(queue: Queue, priority: int) -> int:
    """A priority from below `queue` as seen above it: its offset added, or its fence's offset."""
    return offset(queue) if is_fence(queue) else _clamp(priority + offset(queue))


def _clamp(value: int) -> int:
    return max(LOWEST, min(2**31 - 1, value))
