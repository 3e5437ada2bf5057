"""Rules between pods: inter-pod affinity and anti-affinity, topology spread, host ports.

These are kube-scheduler's InterPodAffinity, PodTopologySpread and NodePorts filters, read
from a pod by the shim. Unlike node constraints they depend on where other pods run, so
every placed pod (Herder's and foreign ones alike) carries its `PodRules`: its labels and
namespace (for other pods' selectors) and the rules it holds itself (its required
anti-affinity keeps later pods away: the symmetric rule).

A term's selector already includes what `matchLabelKeys` and `mismatchLabelKeys` add (the
owner pod's values as `In` and `NotIn`), and its namespaces are resolved: the names listed,
else the owner's own namespace unless a namespace selector is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.objects.constraints import NodeSelectorTerm

HONOR = "Honor"
IGNORE = "Ignore"


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return labels.get(self.key) in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        return self.key not in labels  # DoesNotExist (the shim refuses other operators)


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A Kubernetes label selector: every requirement must match. An empty selector matches
    every pod; `nothing` stands for an absent (null) selector, which matches none."""

    requirements: tuple[LabelRequirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(req.matches(labels) for req in self.requirements)

    def index_key(self) -> tuple[str, frozenset[str]] | None:
        """A (key, values) pair every matching pod's labels must hold, if the selector has one:
        lets the topology look only at selectors a pod's labels can satisfy."""
        for req in self.requirements:
            if req.operator == "In":
                return req.key, req.values
        return None


MATCH_NOTHING = LabelSelector(nothing=True)


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """Pods matching `selector` in the term's namespaces, counted per domain of `topology_key`."""

    selector: LabelSelector
    topology_key: str
    namespaces: frozenset[str] = frozenset()
    namespace_selector: LabelSelector | None = None  # None: only `namespaces`

    def matches(self, namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str]) -> bool:
        if namespace not in self.namespaces and (
            self.namespace_selector is None or not self.namespace_selector.matches(namespace_labels)
        ):
            return False
        return self.selector.matches(labels)

    def matches_pod(self, pod: PodRules, namespace_labels: Mapping[str, str] | None = None) -> bool:
        """Whether `pod` matches; `namespace_labels`: its namespace's labels now, if known."""
        ns_labels = pod.namespace_labels if namespace_labels is None else namespace_labels
        return self.matches(pod.namespace, pod.labels, ns_labels)

    def describe(self) -> str:
        return f"on {self.topology_key}"


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """A topologySpreadConstraints entry; `selector` counts pods of the owner's namespace."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    hard: bool = True  # DoNotSchedule; False: ScheduleAnyway (a score only)
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


@dataclass(frozen=True, slots=True)
class HostPort:
    port: int
    protocol: str = "TCP"
    host_ip: str = "0.0.0.0"

    def conflicts(self, other: HostPort) -> bool:
        if self.port != other.port or self.protocol != other.protocol:
            return False
        wildcard = "0.0.0.0"
        return self.host_ip == other.host_ip or wildcard in (self.host_ip, other.host_ip)

    def describe(self) -> str:
        return f"{self.host_ip}:{self.port}/{self.protocol}"


@dataclass(frozen=True, slots=True)
class PodRules:
    """Who a pod is for other pods' rules, and the rules between pods it holds."""

    namespace: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    affinity: tuple[PodAffinityTerm, ...] = ()
    anti_affinity: tuple[PodAffinityTerm, ...] = ()
    spread: tuple[SpreadConstraint, ...] = ()
    host_ports: tuple[HostPort, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()
    preferred_nodes: tuple[tuple[int, NodeSelectorTerm], ...] = ()  # preferred node affinity (weight, term)

    @property
    def hard_spread(self) -> tuple[SpreadConstraint, ...]:
        return tuple(c for c in self.spread if c.hard)

    def has_filters(self) -> bool:
        """Whether placing this pod must look at other pods (beyond their anti-affinity); a pod
        whose only spread is ScheduleAnyway says yes here and gets no filter."""
        return bool(self.affinity or self.anti_affinity or self.host_ports or self.spread)

    def has_scores(self) -> bool:
        return bool(
            self.preferred_affinity
            or self.preferred_anti_affinity
            or self.preferred_nodes
            or (self.spread and any(not c.hard for c in self.spread))
        )

    def matches_all_affinity(self, pod: PodRules, namespace_labels: Mapping[str, str] | None = None) -> bool:
        """Whether `pod` matches every required affinity term of this pod."""
        return all(term.matches_pod(pod, namespace_labels) for term in self.affinity)


NO_RULES = PodRules()
