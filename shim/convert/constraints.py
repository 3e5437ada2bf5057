"""Where a pod may run, read from its spec: node selector, required node affinity, tolerations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.objects.constraints import NodeConstraints, NodeSelectorRequirement, NodeSelectorTerm, Toleration
from shim.convert.objects import list_at, map_at
from shim.convert.pod_view import PodLike, as_view


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


def pod_constraints(pod: PodLike) -> NodeConstraints:
    pod = as_view(pod)
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
