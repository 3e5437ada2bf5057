"""Where a pod may run, read from its spec: node selector, required node affinity, tolerations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.kept import KeptTable
from core.objects.constraints import NodeConstraints, NodeSelectorRequirement, NodeSelectorTerm, Toleration
from shim.convert.objects import list_at, map_at
from shim.convert.pod_view import PodLike, PodView, as_view
from shim.interning import Interner


def node_selector_term(raw: Mapping[str, Any]) -> NodeSelectorTerm:
    reqs: list[NodeSelectorRequirement] = []
    for kind, is_field in (("matchExpressions", False), ("matchFields", True)):
        for expr in list_at(raw, kind):
            reqs.append(
                NodeSelectorRequirement(
                    key=str(expr.get("key", "")),
                    operator=str(expr.get("operator", "")),
                    values=tuple(str(v) for v in expr.get("values") or ()),
                    field=is_field,
                )
            )
    return NodeSelectorTerm(requirements=tuple(reqs))


# One shared instance per distinct value (shim/interning.py): the core hashes a request's
# constraints once per shape.
shared_constraints: Interner[NodeConstraints] = Interner()

# The pods of one workload carry the same node selector and tolerations (admission gives every
# pod the same two), and building and hashing the constraints is most of their cost: without a
# required node affinity, the shared answer is kept by the fields it reads, as given. Only keys
# of strings (and absent fields) are kept: a string equals no value of another type, so no other
# pod's fields find their answer.
_seen: KeptTable[tuple[Any, ...], NodeConstraints] = KeptTable(4096)


def _fields_key(spec: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The node selector's pairs and each toleration's key, operator, value and effect, as given;
    None when they are not plain dicts and lists."""
    selector = spec.get("nodeSelector")
    tolerations = spec.get("tolerations")
    if selector is not None and type(selector) is not dict:
        return None
    pairs = tuple(selector.items()) if selector else ()
    if tolerations is None:
        return (pairs,)
    if type(tolerations) is not list or not all(type(t) is dict for t in tolerations):
        return None
    return (pairs, *[(t.get("key"), t.get("operator"), t.get("value"), t.get("effect")) for t in tolerations])


def _plain(key: tuple[Any, ...]) -> bool:
    pairs, *tolerations = key
    return all(type(name) is str and type(value) is str for name, value in pairs) and all(
        type(field) is str or field is None for toleration in tolerations for field in toleration
    )


def _no_required_affinity(pod: PodView) -> bool:
    node_affinity = pod.affinity.get("nodeAffinity")
    return node_affinity is None or (
        type(node_affinity) is dict and node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") is None
    )


def pod_constraints(pod: PodLike) -> NodeConstraints:
    """Where the pod may run: its node selector, required node affinity and tolerations."""
    return _read_constraints(as_view(pod))


def shared_pod_constraints(pod: PodLike) -> NodeConstraints:
    """`pod_constraints`, as the one shared instance of that value (`shared_constraints`)."""
    pod = as_view(pod)
    key = _fields_key(pod.spec) if _no_required_affinity(pod) else None
    if key is None:
        return shared_constraints(_read_constraints(pod))
    try:
        found = _seen.get(key)
    except TypeError:  # a value that cannot be hashed
        return shared_constraints(_read_constraints(pod))
    if found is None:
        found = shared_constraints(_read_constraints(pod))
        if _plain(key):
            _seen.keep(key, found)
    return found


def _read_constraints(pod: PodView) -> NodeConstraints:
    spec = pod.spec
    required = map_at(pod.affinity, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    terms = tuple(
        node_selector_term(t)
        for t in list_at(required, "nodeSelectorTerms")
        if type(t) is dict or isinstance(t, Mapping)
    )
    tolerations = tuple(
        Toleration(
            key=str(t.get("key") or ""),
            operator=str(t.get("operator") or "Equal"),
            value=str(t.get("value") or ""),
            effect=str(t.get("effect") or ""),
        )
        for t in list_at(spec, "tolerations")
        if type(t) is dict or isinstance(t, Mapping)
    )
    selector = map_at(spec, "nodeSelector")
    return NodeConstraints(
        node_selector=tuple(sorted((str(k), str(v)) for k, v in selector.items())),
        required_terms=terms,
        tolerations=tolerations,
    )
