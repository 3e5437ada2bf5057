"""Reading the rules between pods from a pod spec: inter-pod affinity, topology spread, host ports.

The result is the core's `PodRules`. Kubernetes' own admission would refuse most malformed
rules; a pod that reaches Herder with one anyway (an unknown operator, `In` without values,
no topology key, an empty list of node selector terms) is not read as "no rule": the term is
named in a problem, and the pod waits with it as its reason, as kube-scheduler keeps such a
pod unschedulable.

`matchLabelKeys` and `mismatchLabelKeys` are folded into the term's selector with this pod's
own values (`In` and `NotIn`), as the API server does for affinity terms and kube-scheduler
for spread constraints; keys the pod does not carry add nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from core.kept import KeptTable
from core.objects.constraints import NodeSelectorTerm
from core.objects.pod_rules import (
    HONOR,
    IGNORE,
    MATCH_NOTHING,
    HostPort,
    LabelRequirement,
    LabelSelector,
    PodAffinityTerm,
    PodRules,
    SpreadConstraint,
    WeightedTerm,
)
from shim.convert.constraints import node_selector_term
from shim.convert.objects import ConversionError, labels_of, list_at, map_at
from shim.convert.pod_view import PodLike, PodView, as_view
from shim.interning import ByIdentity

_SET_OPERATORS = ("In", "NotIn")
_NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_POLICIES = (HONOR, IGNORE)


def label_selector(raw: Any, where: str) -> LabelSelector:
    """A metav1.LabelSelector; None (absent) matches nothing, {} everything."""
    if raw is None:
        return MATCH_NOTHING
    if not isinstance(raw, Mapping):
        raise ConversionError(f"{where}: expected a label selector, got {raw!r}")
    reqs = [
        LabelRequirement(str(key), "In", frozenset({str(value)}))
        for key, value in sorted(map_at(raw, "matchLabels").items())
    ]
    for n, expr in enumerate(list_at(raw, "matchExpressions")):
        at = f"{where}.matchExpressions[{n}]"
        if not isinstance(expr, Mapping) or not expr.get("key"):
            raise ConversionError(f"{at}: a requirement needs a key")
        op, values = str(expr.get("operator", "")), expr.get("values") or []
        if op in _SET_OPERATORS and not values:
            raise ConversionError(f"{at}: operator {op} needs values")
        if op in ("Exists", "DoesNotExist") and values:
            raise ConversionError(f"{at}: operator {op} takes no values")
        if op not in (*_SET_OPERATORS, "Exists", "DoesNotExist"):
            raise ConversionError(f"{at}: unknown operator {op!r}")
        reqs.append(LabelRequirement(str(expr["key"]), op, frozenset(str(v) for v in values)))
    return LabelSelector(tuple(reqs))


def _with_label_keys(
    selector: LabelSelector, labels: Mapping[str, str], match: list[Any], mismatch: list[Any], where: str
) -> LabelSelector:
    if not (match or mismatch):
        return selector
    if selector.nothing:
        raise ConversionError(f"{where}: matchLabelKeys and mismatchLabelKeys need a labelSelector")
    extra = [
        LabelRequirement(str(key), op, frozenset({labels[str(key)]}))
        for keys, op in ((match, "In"), (mismatch, "NotIn"))
        for key in keys
        if str(key) in labels
    ]
    return LabelSelector(selector.requirements + tuple(extra))


def _affinity_term(raw: Any, namespace: str, labels: Mapping[str, str], where: str) -> PodAffinityTerm:
    if not isinstance(raw, Mapping):
        raise ConversionError(f"{where}: expected a pod affinity term, got {raw!r}")
    key = raw.get("topologyKey")
    if not key:
        raise ConversionError(f"{where}: topologyKey is empty")
    selector = label_selector(raw.get("labelSelector"), f"{where}.labelSelector")
    selector = _with_label_keys(
        selector, labels, list_at(raw, "matchLabelKeys"), list_at(raw, "mismatchLabelKeys"), where
    )
    names = frozenset(str(n) for n in list_at(raw, "namespaces"))
    ns_raw = raw.get("namespaceSelector")
    ns_selector = None if ns_raw is None else label_selector(ns_raw, f"{where}.namespaceSelector")
    if not names and ns_selector is None:
        names = frozenset({namespace})
    return PodAffinityTerm(selector, str(key), names, ns_selector)


def _affinity(
    affinity: Mapping[str, Any], kind: str, namespace: str, labels: Mapping[str, str], where: str
) -> tuple[tuple[PodAffinityTerm, ...], tuple[WeightedTerm, ...]]:
    block = map_at(affinity, kind)
    required = tuple(
        _affinity_term(raw, namespace, labels, f"{where}.{kind}.requiredDuringSchedulingIgnoredDuringExecution[{n}]")
        for n, raw in enumerate(list_at(block, "requiredDuringSchedulingIgnoredDuringExecution"))
    )
    preferred = []
    for n, raw in enumerate(list_at(block, "preferredDuringSchedulingIgnoredDuringExecution")):
        at = f"{where}.{kind}.preferredDuringSchedulingIgnoredDuringExecution[{n}]"
        weight = raw.get("weight") if isinstance(raw, Mapping) else None
        if not isinstance(weight, int) or not 1 <= weight <= 100:
            raise ConversionError(f"{at}.weight: expected 1..100, got {weight!r}")
        preferred.append(WeightedTerm(weight, _affinity_term(raw.get("podAffinityTerm"), namespace, labels, at)))
    return required, tuple(preferred)


def _spread(raw: Any, labels: Mapping[str, str], where: str) -> SpreadConstraint:
    if not isinstance(raw, Mapping):
        raise ConversionError(f"{where}: expected a topology spread constraint, got {raw!r}")
    skew = raw.get("maxSkew", 1)
    if not isinstance(skew, int) or isinstance(skew, bool) or skew < 1:
        raise ConversionError(f"{where}.maxSkew: expected an integer above 0, got {skew!r}")
    key = raw.get("topologyKey")
    if not key:
        raise ConversionError(f"{where}: topologyKey is empty")
    when = raw.get("whenUnsatisfiable", "DoNotSchedule")
    if when not in ("DoNotSchedule", "ScheduleAnyway"):
        raise ConversionError(f"{where}.whenUnsatisfiable: unknown value {when!r}")
    min_domains = raw.get("minDomains")
    if min_domains is not None and (not isinstance(min_domains, int) or min_domains < 1 or when != "DoNotSchedule"):
        raise ConversionError(
            f"{where}.minDomains: expected an integer above 0 with DoNotSchedule, got {min_domains!r}"
        )
    policies = []
    for field, default in (("nodeAffinityPolicy", HONOR), ("nodeTaintsPolicy", IGNORE)):
        value = raw.get(field) or default
        if value not in _POLICIES:
            raise ConversionError(f"{where}.{field}: expected Honor or Ignore, got {value!r}")
        policies.append(str(value))
    selector = label_selector(raw.get("labelSelector"), f"{where}.labelSelector")
    selector = _with_label_keys(selector, labels, list_at(raw, "matchLabelKeys"), [], where)
    return SpreadConstraint(
        max_skew=skew,
        topology_key=str(key),
        selector=selector,
        hard=when == "DoNotSchedule",
        min_domains=min_domains or 1,
        node_affinity_policy=policies[0],
        node_taints_policy=policies[1],
    )


def _host_ports(pod: PodView, where: str) -> tuple[HostPort, ...]:
    containers = [*pod.containers] + [
        c for c in pod.init_containers if type(c) is dict and c.get("restartPolicy") == "Always"
    ]
    out = []
    for container in containers:
        for port in list_at(container, "ports") if type(container) is dict or isinstance(container, Mapping) else []:
            number = port.get("hostPort") if type(port) is dict or isinstance(port, Mapping) else None
            if not number:
                continue
            if not isinstance(number, int) or not 0 < number < 65536:
                raise ConversionError(
                    f"{where} container {container.get('name', '?')!r} hostPort {number!r}: not a port"
                )
            out.append(HostPort(number, str(port.get("protocol") or "TCP"), str(port.get("hostIP") or "0.0.0.0")))
    return tuple(out)


def _preferred_nodes(affinity: Mapping[str, Any], where: str) -> tuple[tuple[int, NodeSelectorTerm], ...]:
    out = []
    preferred = list_at(affinity, "nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution")
    for n, raw in enumerate(preferred):
        weight = raw.get("weight") if type(raw) is dict or isinstance(raw, Mapping) else None
        if not isinstance(weight, int) or not 1 <= weight <= 100:
            raise ConversionError(f"{where}[{n}].weight: expected 1..100, got {weight!r}")
        out.append((weight, node_selector_term(map_at(raw, "preference"))))
    return tuple(out)


def node_affinity_problem(pod: PodLike) -> str | None:
    """What is malformed in the pod's required node affinity (which then matches no node)."""
    pod = as_view(pod)
    required = map_at(pod.affinity, "nodeAffinity").get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return None
    where = f"pod {pod.name} spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    terms = list_at(required, "nodeSelectorTerms") if isinstance(required, Mapping) else []
    if not terms:
        return f"{where}.nodeSelectorTerms is empty: no node matches"
    for n, term in enumerate(terms):
        for kind in ("matchExpressions", "matchFields"):
            for m, expr in enumerate(list_at(term, kind) if isinstance(term, Mapping) else []):
                at = f"{where}.nodeSelectorTerms[{n}].{kind}[{m}]"
                op = expr.get("operator") if isinstance(expr, Mapping) else None
                values = (expr.get("values") or []) if isinstance(expr, Mapping) else []
                if op not in _NODE_OPERATORS:
                    return f"{at}: unknown operator {op!r}"
                if op in _SET_OPERATORS and not values:
                    return f"{at}: operator {op} needs values"
                if op in ("Gt", "Lt") and (len(values) != 1 or not str(values[0]).lstrip("-").isdigit()):
                    return f"{at}: operator {op} needs one integer value, got {values!r}"
                if op in ("Exists", "DoesNotExist") and values:
                    return f"{at}: operator {op} takes no values"
    return None


_NO_LABELS: Mapping[str, str] = MappingProxyType({})
_namespace_labels: ByIdentity[Mapping[str, Any], Mapping[str, str]] = ByIdentity()  # one mapping per namespace


def as_strings(labels: Mapping[str, Any]) -> Mapping[str, str]:
    """Labels as strings; one shared empty mapping for the many objects without."""
    return {str(k): str(v) for k, v in labels.items()} if labels else _NO_LABELS


def string_labels(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    """The object's labels as strings; one shared empty mapping for the many objects without."""
    return as_strings(labels_of(obj))


def pod_rules(pod: PodLike, namespace: Mapping[str, Any] | None) -> PodRules:
    """The pod's labels and its rules between pods; ConversionError names a malformed one."""
    pod = as_view(pod)
    spec = pod.spec
    ns = pod.namespace
    labels = as_strings(pod.labels)
    name = pod.name
    affinity: tuple[PodAffinityTerm, ...] = ()
    anti: tuple[PodAffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti: tuple[WeightedTerm, ...] = ()
    preferred_nodes: tuple[tuple[int, NodeSelectorTerm], ...] = ()
    if pod.affinity:  # most pods have none: nothing to read
        where = f"pod {name} spec.affinity"
        affinity, preferred_affinity = _affinity(pod.affinity, "podAffinity", ns, labels, where)
        anti, preferred_anti = _affinity(pod.affinity, "podAntiAffinity", ns, labels, where)
        preferred_nodes = _preferred_nodes(
            pod.affinity, f"{where}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
        )
    spread = tuple(
        _spread(raw, labels, f"pod {name} spec.topologySpreadConstraints[{n}]")
        for n, raw in enumerate(list_at(spec, "topologySpreadConstraints"))
    )
    host_ports = _host_ports(pod, f"pod {name}")
    namespace_labels = _namespace_labels(namespace, string_labels) if namespace else _NO_LABELS
    if not (affinity or anti or spread or host_ports or preferred_affinity or preferred_anti or preferred_nodes):
        return _labels_only(ns, labels, namespace_labels)
    return PodRules(
        namespace=ns,
        labels=labels,
        namespace_labels=namespace_labels,
        affinity=affinity,
        anti_affinity=anti,
        spread=spread,
        host_ports=host_ports,
        preferred_affinity=preferred_affinity,
        preferred_anti_affinity=preferred_anti,
        preferred_nodes=preferred_nodes,
    )


# Most pods hold no rules between pods, and the pods of one workload carry the same labels: they
# share one PodRules (kept, like every long-lived object, out of each pod's own memory and out of
# the cyclic collector's walks). Keyed by the namespace labels' identity: an entry keeps its
# mapping alive, so the id is not reused while the entry is here.
_labels_only_seen: KeptTable[tuple[str, tuple[tuple[str, str], ...], int], PodRules] = KeptTable(4096)


def _labels_only(namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str]) -> PodRules:
    key = (namespace, tuple(labels.items()), id(namespace_labels))
    found = _labels_only_seen.get(key)
    if found is None:
        found = _labels_only_seen.keep(
            key, PodRules(namespace=namespace, labels=labels, namespace_labels=namespace_labels)
        )
    return found


def pod_rules_or_problem(pod: PodLike, namespace: Mapping[str, Any] | None) -> tuple[PodRules, str | None]:
    """The rules, or (for a malformed rule) just the pod's labels and the problem to wait on."""
    pod = as_view(pod)
    try:
        return pod_rules(pod, namespace), node_affinity_problem(pod)
    except ConversionError as err:
        return PodRules(pod.namespace, as_strings(pod.labels), string_labels(namespace)), str(err)
