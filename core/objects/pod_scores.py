"""Soft rules as tie-breakers: which of the nodes the node sort policy ranks equally is best.

kube-scheduler adds weighted scores of several plugins; YuniKorn ignores them all. Herder keeps
its node sort policy (`binpacking` or `fair`) in charge and lets the pod's preferences decide
only between the nodes that policy finds equally good (empty nodes under binpacking, say):

- preferred node affinity: the sum of the weights of the preference terms the node matches;
- PreferNoSchedule taints: fewer taints the pod does not tolerate is better;
- preferred pod affinity / anti-affinity: plus / minus the weight for every matching pod in
  the node's domain;
- `ScheduleAnyway` spread: fewer matching pods of the pod's namespace in the node's domain; a
  node without a constraint's topology key comes last (kube-scheduler scores it lowest).

Each part is scaled to 0..1 over the candidates and the parts are added, so no single part
outweighs the others by its units; the node index breaks the ties left (`NodeIndex.select`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from core.objects.constraints import NodeConstraints
from core.objects.node import Node
from core.objects.node_index import NodeIndex, prefer_no_schedule_count
from core.objects.pod_rules import PodAffinityTerm, PodRules, SpreadConstraint
from core.objects.pod_topology import PodTopology, Selector

Scores = npt.NDArray[np.float64]


def _scaled(values: Scores) -> Scores:
    low, high = float(values.min()), float(values.max())
    return (values - low) / (high - low) if high > low else np.zeros_like(values)


def _domain_counts(counts: Mapping[str, int], key: str, index: NodeIndex, candidates: npt.NDArray[np.intp]) -> Scores:
    """For each candidate column, the matching pods in its domain of `key` (0 without the key)."""
    codes, values = index.domains(key)
    per_domain = np.zeros(len(values) + 1, dtype=np.float64)
    for node_id, count in counts.items():
        pos = index.position(node_id)
        if pos is not None:
            per_domain[codes[pos]] += count
    per_domain[-1] = 0.0
    found: Scores = per_domain[codes[candidates]]
    return found


def preference_scores(
    pod: PodRules,
    constraints: NodeConstraints,
    candidates: npt.NDArray[np.intp],
    index: NodeIndex,
    topology: PodTopology,
    nodes: Mapping[str, Node],
) -> Scores:
    """A score per candidate column (higher is better)."""
    names = [index.name(int(pos)) for pos in candidates]
    infos = [nodes[name].info for name in names]
    total = np.zeros(len(candidates), dtype=np.float64)
    if pod.preferred_nodes:
        weights = [
            sum(weight for weight, term in pod.preferred_nodes if term.matches(info.labels, info.node_id))
            for info in infos
        ]
        total += _scaled(np.array(weights, dtype=np.float64))
    untolerated = [-prefer_no_schedule_count(info.taints, constraints) for info in infos]
    total += _scaled(np.array(untolerated, dtype=np.float64))
    affinity = np.zeros(len(candidates), dtype=np.float64)
    for sign, weighted in [(1, w) for w in pod.preferred_affinity] + [(-1, w) for w in pod.preferred_anti_affinity]:
        counts = topology.counts((weighted.term,))
        affinity += sign * weighted.weight * _domain_counts(counts, weighted.term.topology_key, index, candidates)
    total += _scaled(affinity)
    soft = [constraint for constraint in pod.spread if not constraint.hard]
    if soft:
        total += _scaled(_spread_scores(soft, pod.namespace, candidates, index, topology))
    return total


def _spread_scores(
    soft: list[SpreadConstraint],
    namespace: str,
    candidates: npt.NDArray[np.intp],
    index: NodeIndex,
    topology: PodTopology,
) -> Scores:
    """Minus the matching pods in each candidate's domains; a candidate lacking a constraint's
    key ranks below every other, as kube-scheduler scores such a node lowest."""
    crowding = np.zeros(len(candidates), dtype=np.float64)
    keyed = np.ones(len(candidates), dtype=np.bool_)
    for constraint in soft:
        selector: Selector = (PodAffinityTerm(constraint.selector, "", frozenset({namespace})),)
        crowding -= _domain_counts(topology.counts(selector), constraint.topology_key, index, candidates)
        codes, values = index.domains(constraint.topology_key)
        keyed &= codes[candidates] < len(values)
    if keyed.any() and not keyed.all():
        crowding[~keyed] = crowding[keyed].min() - 1.0
    return crowding
