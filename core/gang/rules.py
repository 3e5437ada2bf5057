"""The checks that reject a gang at once: its placeholders could never all be allocated.

A gang of more members than the setting `gang.maxMembers` allows is rejected before anything is
made for it (one pod annotation must not make a billion placeholder asks). A gang's
placeholders (every group's `minMember` x `minResource`) must fit, all together, under its leaf
queue's max and every ancestor's (the root's cluster size excepted: nodes come and go), under
every user and group limit that applies to its user there, and under its elastic quota's max.
Otherwise the placeholders would wait forever holding part of the room, so the application is
rejected with the first rule it breaks. A PodGroup API's gang (`from_pods`) is checked the same
way with its minimum of pods and resources, and again with its pods' own requests once they
exist (`total_refusal`).

The cluster's size is no rule of that kind (nodes come and go, an autoscaler adds them): a gang
needing more than the whole cluster has places no placeholder and waits, saying so, until nodes
are added (`beyond_cluster`, asked until its first placeholder is placed).
"""

from __future__ import annotations

from collections.abc import Mapping

from core.elastic.spec import DEFAULT_QUOTA, SYSTEM_QUOTA
from core.gang.spec import GangSpec
from core.objects.ask import Ask
from core.objects.queue import Queue
from core.resources import Resource, format_amount
from core.state import CoreState


def gang_refusal(state: CoreState, queue: Queue, ask: Ask, spec: GangSpec) -> str | None:
    """Why this gang can never reserve, or None."""
    if not spec.groups and not spec.from_pods:
        return "the task-groups annotation defines no task group"
    most = state.settings.gang_max_members
    if spec.members > most:
        return f"the gang has {spec.members} members in all, above the setting gang.maxMembers ({most})"
    return total_refusal(state, queue, ask, spec.total)


def total_refusal(state: CoreState, queue: Queue, ask: Ask, total: Resource) -> str | None:
    """Why placeholders taking `total` together could never all be allocated, or None."""
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


def beyond_cluster(state: CoreState, total: Resource) -> str | None:
    """Why a gang whose placeholders take `total` together cannot reserve on the cluster as it
    is now (it needs more than all its nodes have), or None. Resources no node has are not
    counted: an autoscaler may bring them."""
    reason = _above(total, state.partition.cluster_capacity, "what the whole cluster has")
    if reason is None:
        return None
    return f"{reason}: no placeholder is placed until nodes are added"


def _above(total: Resource, maximum: Mapping[str, int], what: str) -> str | None:
    over = total.exceeding(maximum)
    if not over:
        return None
    key = over[0]
    return (
        f"the gang's placeholders need {key} {format_amount(key, total.get_value(key))} in all,"
        f" above {what} ({format_amount(key, maximum.get(key, 0))})"
    )
