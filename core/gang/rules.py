"""The checks that reject a gang at once: its placeholders could never all be allocated.

A gang's placeholders (every group's `minMember` x `minResource`) must fit, all together, under
its leaf queue's max and every ancestor's (the root's cluster size excepted: nodes come and
go), under every user and group limit that applies to its user there, and under its elastic
quota's max. Otherwise the placeholders would wait forever holding part of the room, so the
application is rejected with the first rule it breaks.
"""

from __future__ import annotations

from core.elastic.spec import DEFAULT_QUOTA, SYSTEM_QUOTA
from core.gang.spec import GangSpec
from core.objects.ask import Ask
from core.objects.queue import Queue
from core.resources import Resource, format_amount
from core.state import CoreState


def gang_refusal(state: CoreState, queue: Queue, ask: Ask, spec: GangSpec) -> str | None:
    """Why this gang can never reserve, or None."""
    if not spec.groups:
        return "the task-groups annotation defines no task group"
    total = spec.total
    for level in queue.ancestry():
        if level.parent is None or level.max is None:
            continue
        reason = _above(total, level.max, f"the max of queue {level.path}")
        if reason:
            return reason
    for who, path, limit in state.ugm.resource_limits(queue.path, ask.user):
        reason = _above(total, limit, f"the limit of {who} in queue {path}")
        if reason:
            return reason
    quota = state.quotas.resolve(ask.namespace, ask.quota)
    if quota not in (DEFAULT_QUOTA, SYSTEM_QUOTA):
        reason = _above(total, state.quotas.max_of(quota), f"the max of elastic quota {quota}")
        if reason:
            return reason
    return None


def _above(total: Resource, maximum: Resource, what: str) -> str | None:
    over = total.exceeding(maximum)
    if not over:
        return None
    key = over[0]
    return (
        f"the gang's placeholders need {key} {format_amount(key, total.get_value(key))} in all,"
        f" above {what} ({format_amount(key, maximum.get_value(key))})"
    )
