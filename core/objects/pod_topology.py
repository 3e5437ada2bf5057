"""Where placed pods are, counted the way rules between pods ask: per node, per selector.

kube-scheduler's InterPodAffinity, PodTopologySpread and NodePorts filters all ask "how many
pods matching this selector run in this node's domain?". Scanning every pod per decision
would cost O(pods); instead a *counter* is kept per distinct selector (a tuple of affinity
terms a pod must all match), holding matching pods per node. A counter is filled once when a
rule first needs it and then follows every placement and release, so a decision reads only
the nodes that hold matching pods. Selectors are indexed by a label value they require, so a
placed pod updates only the counters its labels can satisfy.

The required anti-affinity terms that placed pods hold are kept the same way (per term, per
node), so an incoming pod, with or without rules of its own, is kept out of the domains where
a placed pod's anti-affinity would match it (the symmetric rule). Host ports in use are kept
per node.

A `namespaceSelector` matches a namespace's labels as they are now: they are told apart from the
pods (`set_namespace_labels`), and a change drops the counters whose terms select namespaces, to
be filled again on next use.

`PodTopology.filters` turns a pod's rules into one boolean mask over the node index's columns
per rule, each with the reason a person reads when it leaves no node. A pod with no rules,
matched by no placed pod's anti-affinity, gets no mask and keeps the node index's fast path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from core.objects.constraints import NodeConstraints
from core.objects.node import Node
from core.objects.node_index import NodeIndex
from core.objects.pod_rules import HostPort, PodAffinityTerm, PodRules, SpreadConstraint

Mask = npt.NDArray[np.bool_]
Selector = tuple[PodAffinityTerm, ...]  # a pod matches when it matches every term
_COUNTER_LIMIT = 4096  # distinct selectors counted before the unused ones are dropped


def _plain(term: PodAffinityTerm) -> PodAffinityTerm:
    """The term without its topology key: which pods match does not depend on it."""
    return replace(term, topology_key="") if term.topology_key else term


def _index_keys(selector: Selector) -> Iterator[tuple[str, str]]:
    for term in selector:
        found = term.selector.index_key()
        if found is not None:
            key, values = found
            for value in values:
                yield key, value
            return


class _Indexed:
    """Selectors (or terms) findable by the labels of a pod that may match them."""

    def __init__(self) -> None:
        self._by_label: dict[tuple[str, str], set[Selector]] = {}
        self._open: set[Selector] = set()  # no required label value: looked at for every pod

    def add(self, selector: Selector) -> None:
        keys = list(_index_keys(selector))
        if not keys:
            self._open.add(selector)
        for pair in keys:
            self._by_label.setdefault(pair, set()).add(selector)

    def discard(self, selector: Selector) -> None:
        self._open.discard(selector)
        for pair in _index_keys(selector):
            bucket = self._by_label.get(pair)
            if bucket is not None:
                bucket.discard(selector)
                if not bucket:
                    del self._by_label[pair]

    def candidates(self, labels: Mapping[str, str]) -> set[Selector]:
        found = set(self._open)
        by_label = self._by_label
        if by_label:
            for pair in labels.items():
                bucket = by_label.get(pair)
                if bucket:
                    found |= bucket
        return found

    def __bool__(self) -> bool:
        return bool(self._by_label or self._open)


def _matches(selector: Selector, pod: PodRules, namespace_labels: Mapping[str, str]) -> bool:
    return all(term.matches_pod(pod, namespace_labels) for term in selector)


def _selects_namespaces(selector: Selector) -> bool:
    return any(term.namespace_selector is not None for term in selector)


def _index_labels(labelled: dict[tuple[str, str], set[str]], key: str, pod: PodRules) -> None:
    for pair in pod.labels.items():
        found = labelled.get(pair)
        if found is None:
            labelled[pair] = {key}
        else:
            found.add(key)


def _bump(counts: dict[str, int], node_id: str, sign: int) -> None:
    left = counts.get(node_id, 0) + sign
    if left > 0:
        counts[node_id] = left
    else:
        counts.pop(node_id, None)


class PodTopology:
    """Placed pods' labels, held anti-affinity and host ports, counted per node."""

    def __init__(self) -> None:
        self._pods: dict[str, tuple[str, PodRules]] = {}
        # placed pods by label, to fill counters: built when a counter is first filled (most
        # clusters have no rule between pods, and most pods' labels are their workload's own)
        self._labelled: dict[tuple[str, str], set[str]] | None = None
        self._counters: dict[Selector, dict[str, int]] = {}
        self._counter_index = _Indexed()
        self._held: dict[PodAffinityTerm, dict[str, int]] = {}  # placed pods' anti-affinity terms
        self._held_index = _Indexed()
        self._ports: dict[str, list[HostPort]] = {}
        self._namespace_labels: dict[str, Mapping[str, str]] = {}

    # -- namespaces ----------------------------------------------------------------------
    def set_namespace_labels(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """The namespace's labels now; True when that changes what a namespaceSelector matches."""
        labels = dict(labels)
        if self._namespace_labels.get(namespace) == labels:
            return False
        self._namespace_labels[namespace] = labels
        for selector in [selector for selector in self._counters if _selects_namespaces(selector)]:
            del self._counters[selector]
            self._counter_index.discard(selector)
        return True

    def namespace_labels(self, pod: PodRules) -> Mapping[str, str]:
        """The labels of the pod's namespace: as last told, else as read with the pod."""
        return self._namespace_labels.get(pod.namespace, pod.namespace_labels)

    # -- placed pods ---------------------------------------------------------------------
    def add(self, key: str, node_id: str, pod: PodRules) -> None:
        if key in self._pods:
            return
        self._pods[key] = (node_id, pod)
        if self._labelled is not None:
            _index_labels(self._labelled, key, pod)
        self._change(node_id, pod, 1)

    def remove(self, key: str) -> None:
        entry = self._pods.pop(key, None)
        if entry is not None:
            if self._labelled is not None:
                for pair in entry[1].labels.items():
                    found = self._labelled.get(pair)
                    if found is not None:
                        found.discard(key)
                        if not found:
                            del self._labelled[pair]
            self._change(entry[0], entry[1], -1)

    def _change(self, node_id: str, pod: PodRules, sign: int) -> None:
        if self._counters:
            ns_labels = self.namespace_labels(pod)
            for selector in self._counter_index.candidates(pod.labels):
                if _matches(selector, pod, ns_labels):
                    _bump(self._counters[selector], node_id, sign)
        for term in pod.anti_affinity:
            counts = self._held.setdefault(term, {})
            _bump(counts, node_id, sign)
            if sign > 0 and len(counts) == 1 and counts[node_id] == 1:
                self._held_index.add((term,))
            elif not counts:
                del self._held[term]
                self._held_index.discard((term,))
        if pod.host_ports:
            ports = self._ports.setdefault(node_id, [])
            for port in pod.host_ports:
                if sign > 0:
                    ports.append(port)
                else:
                    ports.remove(port)
            if not ports:
                del self._ports[node_id]

    @contextmanager
    def without(self, keys: Iterable[str]) -> Iterator[None]:
        """The topology as if these placed pods were gone (a preemption plan's victims), then
        as before."""
        gone = [(key, self._pods[key]) for key in keys if key in self._pods]
        for key, _ in gone:
            self.remove(key)
        try:
            yield
        finally:
            for key, (node_id, pod) in gone:
                self.add(key, node_id, pod)

    def placed(self, key: str) -> PodRules | None:
        entry = self._pods.get(key)
        return entry[1] if entry is not None else None

    def may_lift(self, pod: PodRules, key: str) -> bool:
        """Whether the placed pod `key` going could lift a refusal of `pod`: `pod`'s anti-affinity
        or spread counts it, its anti-affinity matches `pod`, or it holds a port `pod` wants."""
        placed = self._pods.get(key)
        if placed is None:
            return False
        other = placed[1]
        other_ns = self.namespace_labels(other)
        if any(term.matches_pod(other, other_ns) for term in pod.anti_affinity):
            return True
        own_ns = self.namespace_labels(pod)
        if any(term.matches_pod(pod, own_ns) for term in other.anti_affinity):
            return True
        if any(other.namespace == pod.namespace and c.selector.matches(other.labels) for c in pod.hard_spread):
            return True
        return any(want.conflicts(used) for want in pod.host_ports for used in other.host_ports)

    def may_break(self, pod: PodRules, key: str) -> bool:
        """Whether the placed pod `key` going could take away what `pod`'s affinity needs."""
        placed = self._pods.get(key)
        return (
            bool(pod.affinity)
            and placed is not None
            and pod.matches_all_affinity(placed[1], self.namespace_labels(placed[1]))
        )

    def counts(self, selector: Selector) -> dict[str, int]:
        """Matching placed pods per node (filled on first use, then kept up to date)."""
        selector = tuple(_plain(term) for term in selector)
        counts = self._counters.get(selector)
        if counts is None:
            if len(self._counters) >= _COUNTER_LIMIT:
                self._counters.clear()
                self._counter_index = _Indexed()
            counts = {}
            for node_id, pod in self._candidates(selector):
                if _matches(selector, pod, self.namespace_labels(pod)):
                    counts[node_id] = counts.get(node_id, 0) + 1
            self._counters[selector] = counts
            self._counter_index.add(selector)
        return counts

    def _candidates(self, selector: Selector) -> Iterable[tuple[str, PodRules]]:
        """The placed pods that may match: those holding a label value the selector requires."""
        pairs = list(_index_keys(selector))
        if not pairs:
            return self._pods.values()
        labelled = self._labelled
        if labelled is None:
            labelled = self._labelled = {}
            for key, (_, pod) in self._pods.items():
                _index_labels(labelled, key, pod)
        keys: set[str] = set()
        for pair in pairs:
            keys |= labelled.get(pair, set())
        return [self._pods[key] for key in keys]

    # -- filters -------------------------------------------------------------------------
    def blocks_anyone(self) -> bool:
        """Whether some placed pod holds required anti-affinity (which any pod may match)."""
        return bool(self._held)

    def filters(
        self,
        pod: PodRules,
        constraints: NodeConstraints,
        index: NodeIndex,
        nodes: Mapping[str, Node],
    ) -> list[tuple[str, Mask]]:
        """One mask per rule that restricts the pod, with the reason for the nodes it refuses."""
        out: list[tuple[str, Mask]] = []
        if pod.affinity:
            out.extend(self._affinity(pod, index, nodes))
        for term in pod.anti_affinity:
            values = self._domains(self.counts((term,)), term.topology_key, nodes)
            if values:
                out.append((f"pod anti-affinity {term.describe()}", ~index.in_domains(term.topology_key, values)))
        if self._held_index:
            out.extend(self._existing_anti_affinity(pod, index, nodes))
        for constraint in pod.hard_spread:
            out.append(self._spread(pod, constraint, constraints, index))
        if pod.host_ports and self._ports:
            out.extend(self._host_ports(pod, index))
        return out

    @staticmethod
    def _domains(counts: Mapping[str, int], topology_key: str, nodes: Mapping[str, Node]) -> set[str]:
        out = set()
        for node_id in counts:
            node = nodes.get(node_id)
            value = node.info.labels.get(topology_key) if node is not None else None
            if value is not None:
                out.add(value)
        return out

    def _existing_anti_affinity(
        self, pod: PodRules, index: NodeIndex, nodes: Mapping[str, Node]
    ) -> Iterable[tuple[str, Mask]]:
        forbidden: dict[str, set[str]] = {}
        ns_labels = self.namespace_labels(pod)
        for (term,) in self._held_index.candidates(pod.labels):
            if term.matches_pod(pod, ns_labels):
                values = self._domains(self._held[term], term.topology_key, nodes)
                forbidden.setdefault(term.topology_key, set()).update(values)
        for key, values in sorted(forbidden.items()):
            if values:
                yield f"anti-affinity of pods running on {key}", ~index.in_domains(key, values)

    def _affinity(self, pod: PodRules, index: NodeIndex, nodes: Mapping[str, Node]) -> Iterable[tuple[str, Mask]]:
        counts = self.counts(pod.affinity)
        keys = sorted({term.topology_key for term in pod.affinity})
        per_key = {key: self._domains(counts, key, nodes) for key in keys}
        has_keys = index.has_labels(tuple(keys))
        if not any(per_key.values()) and pod.matches_all_affinity(pod, self.namespace_labels(pod)):
            # The first pod of a group affine to itself may go wherever the keys exist.
            yield f"pod affinity (missing label {', '.join(keys)})", has_keys
            return
        for key in keys:
            yield f"pod affinity on {key}", has_keys & index.in_domains(key, per_key[key])

    def _spread(
        self, pod: PodRules, constraint: SpreadConstraint, constraints: NodeConstraints, index: NodeIndex
    ) -> tuple[str, Mask]:
        key = constraint.topology_key
        spread_keys = tuple(sorted({c.topology_key for c in pod.hard_spread}))
        eligible = index.spread_eligible(
            constraints,
            spread_keys,
            constraint.node_affinity_policy == "Honor",
            constraint.node_taints_policy == "Honor",
        )
        codes, values = index.domains(key)
        counts = np.zeros(len(values) + 1, dtype=np.int64)  # code len(values): nodes without the key
        selector = (PodAffinityTerm(constraint.selector, "", frozenset({pod.namespace})),)
        for node_id, count in self.counts(selector).items():
            pos = index.position(node_id)
            if pos is not None and eligible[pos]:
                counts[codes[pos]] += count
        present = np.zeros(len(values) + 1, dtype=np.bool_)
        present[codes[eligible]] = True
        present[-1] = False
        domains = int(present.sum())
        lowest = 0 if domains < constraint.min_domains or domains == 0 else int(counts[present].min())
        own = 1 if constraint.selector.matches(pod.labels) else 0
        allowed = (codes < len(values)) & (counts[codes] + own - lowest <= constraint.max_skew)
        return f"topology spread on {key} (maxSkew {constraint.max_skew})", allowed

    def _host_ports(self, pod: PodRules, index: NodeIndex) -> Iterable[tuple[str, Mask]]:
        taken: dict[str, list[str]] = {}
        for node_id, ports in self._ports.items():
            for want in pod.host_ports:
                if any(want.conflicts(used) for used in ports):
                    taken.setdefault(want.describe(), []).append(node_id)
        for port, nodes in sorted(taken.items()):
            mask = np.ones(index.size, dtype=np.bool_)
            for node_id in nodes:
                pos = index.position(node_id)
                if pos is not None:
                    mask[pos] = False
            yield f"host port {port} in use", mask
