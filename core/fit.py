"""Which node an ask goes to, and why none when it waits.

The node index answers for pods with nothing but node constraints (its remembered choices
make that cheap, and a failure is remembered per pod shape until something changes). A pod
with rules between pods, or matched by a placed pod's anti-affinity, gets one mask per rule
from the pod topology and a full pass over the nodes; a pod with preferences gets them as
tie-breakers among the nodes the node sort policy ranks equally. A pod waiting on affinity or
spread is woken when a pod its selectors match is placed. A pod of a gang with a topology
(core/gang/topology.py) gets its gang's domain as one more mask (required) or tries its
domains first (preferred); a placeholder of a gang larger than the cluster, a mask of no node.
When its gang's domains are all that restricts it, the node index remembers its best nodes per
shape and domains as it does for pods without rules (`NodeIndex.select_within`), instead of a
full pass for each of the gang's pods.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from core.gang import topology as gang_topology
from core.objects.ask import Ask
from core.objects.node import Node
from core.objects.node_index import RESERVED_FOR_OTHERS, TieBreak, static_mismatch
from core.objects.pod_scores import preference_scores
from core.objects.pod_topology import Mask
from core.objects.volumes import NodeView, VolumePlan
from core.state import CoreState


def _shape(ask: Ask) -> object:
    return (ask.resource, ask.constraints)


def select_node(state: CoreState, ask: Ask) -> str | None:
    partition = state.partition
    index = partition.node_index
    rules = pod_rule_masks(state, ask)
    if state.gangs.confined:
        preferred = gang_topology.preferred_domains(state, ask)
        if preferred is not None:  # a preferred topology's domains first, then any node
            if rules is None:
                node_id = index.select_within(ask.resource, ask.constraints, *preferred)
            else:
                first = index.domain_mask(*preferred).copy()
                for _, mask in rules:
                    first &= mask
                node_id = index.select(ask.resource, ask.constraints, first)
            if node_id is not None:
                return node_id
    tiebreak = _tiebreak(state, ask) if ask.pod.has_scores() else None
    if rules is not None or tiebreak is not None:
        state.rule_waiting.pop(ask.key, None)
        within = gang_topology.confining(state, ask) if rules is not None and len(rules) == 1 else None
        if within is not None and tiebreak is None:  # its gang's domain alone: remembered per domain
            node_id = index.select_within(ask.resource, ask.constraints, *within)
        else:
            allowed = None
            if rules:
                allowed = rules[0][1].copy()
                for _, mask in rules[1:]:
                    allowed &= mask
            node_id = index.select(ask.resource, ask.constraints, allowed, tiebreak)
        if node_id is None:
            reason = index.explain(ask.resource, ask.constraints, rules or ())
            state.fit_failures[ask.key] = (state.version, reason)
            if ask.pod.affinity or ask.pod.hard_spread:
                state.rule_waiting[ask.key] = ask.pod  # placing other pods may let it run
        return node_id
    if state.fit_failures:  # most decisions find it empty: no shape to hash
        state.fit_failures.pop(ask.key, None)
        failed = state.fit_failures.get(_shape(ask))
        if failed is not None and failed[0] == state.version:
            return None
    node_id = partition.node_index.select(ask.resource, ask.constraints)
    if node_id is None:
        reason = partition.node_index.explain(ask.resource, ask.constraints)
        state.fit_failures[_shape(ask)] = (state.version, reason)
    return node_id


def _tiebreak(state: CoreState, ask: Ask) -> TieBreak:
    partition = state.partition

    def scores(candidates: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        return preference_scores(
            ask.pod, ask.constraints, candidates, partition.node_index, partition.topology, partition.nodes
        )

    return scores


def pod_rule_masks(state: CoreState, ask: Ask) -> list[tuple[str, Mask]] | None:
    """The masks of the rules between pods that restrict this ask, None when none does (the
    fast path: a pod with no such rules that no placed pod's anti-affinity matches)."""
    topology = state.partition.topology
    gangs = state.gangs
    if not (ask.pod.has_filters() or topology.blocks_anyone() or ask.claims):
        if not (gangs.confined or gangs.too_large):
            return None  # the common pod: no rules, and no gang restricts where pods go
        if ask.application_id not in gangs.confined and ask.application_id not in gangs.too_large:
            return None
    partition = state.partition
    rules = topology.filters(ask.pod, ask.constraints, partition.node_index, partition.nodes)
    if ask.claims:
        rules.extend(volume_masks(state, ask))
    if gangs.confined or gangs.too_large:
        rules.extend(gang_topology.gang_rules(state, ask))
    return rules or None


def node_view(node: Node) -> NodeView:
    return NodeView(node.node_id, node.info.labels)


def volume_masks(state: CoreState, ask: Ask) -> list[tuple[str, Mask]]:
    """One mask per reason the pod's claims refuse nodes (VolumeBinding, VolumeZone,
    VolumeRestrictions); a claim that refuses every node (missing, unbound Immediate, a
    ReadWriteOncePod claim in use) gives one mask of no node."""
    partition = state.partition
    index, catalog = partition.node_index, partition.volumes
    size = index.size
    for claim in ask.claims:
        reason = catalog.claim_refusal(claim, ask.key)
        if reason is not None:
            return [(reason, np.zeros(size, dtype=np.bool_))]
    views = [node_view(partition.nodes[index.name(pos)]) for pos in range(size)]
    if len(ask.claims) == 1:
        refusals = catalog.node_refusals(ask.claims[0], views)
    else:  # claims of one pod must not take one volume: judged node by node
        refusals = {}
        for view in views:
            reason, _ = catalog.plan(ask.claims, view)
            if reason is not None:
                refusals[view.name] = reason
    masks: dict[str, Mask] = {}
    for name, reason in refusals.items():
        mask = masks.get(reason)
        if mask is None:
            mask = masks[reason] = np.ones(size, dtype=np.bool_)
        pos = index.position(name)
        if pos is not None:
            mask[pos] = False
    return sorted(masks.items())


def volume_plan(state: CoreState, ask: Ask, node_id: str) -> VolumePlan | None:
    """What placing the ask on the node writes to its claims; None when they refuse the node."""
    partition = state.partition
    reason, plan = partition.volumes.plan(ask.claims, node_view(partition.nodes[node_id]))
    return plan if reason is None else None


def rules_refusal(state: CoreState, ask: Ask, node_id: str, without: Iterable[str] = ()) -> str | None:
    """The first rule between pods that refuses the ask on this node (None: none does), as if
    the placed pods `without` were gone (the victims a preemption plan would evict)."""
    partition = state.partition
    with partition.topology.without(without):
        rules = pod_rule_masks(state, ask)
        if not rules:
            return None
        pos = partition.node_index.position(node_id)
        if pos is None:
            return f"node {node_id} is not in the node index"
        return next((why for why, mask in rules if not mask[pos]), None)


def node_verdicts(state: CoreState, ask: Ask) -> dict[str, str | None]:
    """Per node, the first filter that refuses the ask there (None when none does): node
    state, taints and node affinity, then the rules between pods, then room."""
    partition = state.partition
    rules = pod_rule_masks(state, ask) or []
    out: dict[str, str | None] = {}
    for node_id, node in sorted(partition.nodes.items()):
        reason = static_mismatch(node, ask.constraints)
        if reason is None and rules:
            pos = partition.node_index.position(node_id)
            reason = next((why for why, mask in rules if pos is not None and not mask[pos]), None)
        if reason is None:
            room = node.available()
            own = node.held.get(ask.key)
            short = ask.resource.insufficient(room + own if own is not None else room)
            if short and node.held and ask.resource.fits_in(node.free()):
                reason = RESERVED_FOR_OTHERS
            else:
                reason = f"insufficient {', '.join(short)}" if short else None
        out[node_id] = reason
    return out


def fit_reason(state: CoreState, ask: Ask) -> str:
    failed = state.fit_failures.get(ask.key) or state.fit_failures.get(_shape(ask))
    return failed[1] if failed is not None else "no node fits"


def wake_rule_waiters(state: CoreState, placed: Ask) -> None:
    """A placed pod that an affinity or spread selector of a waiting pod matches may let that
    pod run (its group's first pod is in, or a domain's count rose): try the waiting again."""
    pod = placed.pod
    ns_labels = state.partition.topology.namespace_labels(pod)
    for rules in state.rule_waiting.values():
        if (rules.affinity and rules.matches_all_affinity(pod, ns_labels)) or any(
            rules.namespace == pod.namespace and c.selector.matches(pod.labels) for c in rules.hard_spread
        ):
            state.bump()
            state.rule_waiting.clear()
            return
