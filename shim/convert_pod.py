"""Reading a pod spec: how much a pod occupies on its node, where it may run, and whether it
asked not to be preempted (with what its PriorityClass adds at admission).

Also the shared helpers for reading Kubernetes objects as plain dicts and the ConversionError
every conversion raises; shim/convert.py re-exports what callers use.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Any

from core.objects.constraints import NodeConstraints, NodeSelectorRequirement, NodeSelectorTerm, Toleration
from core.resources import QuantityError, Resource, resource_from_kubernetes

PODS = "pods"
ANNOTATION_ALLOW_PREEMPTION = "yunikorn.apache.org/allow-preemption"  # "false": preempted across queues last


class ConversionError(ValueError):
    """A Kubernetes object Herder cannot read; the message names the object and the field."""


# Objects read from JSON or YAML are plain dicts and lists: `type(x) is dict` answers at once,
# the abstract Mapping/Sequence checks (slow: an ABC lookup each) only for anything else.


def map_at(obj: Mapping[str, Any] | None, *path: str) -> Mapping[str, Any]:
    cur: Any = obj or {}
    for key in path:
        cur = cur.get(key) if type(cur) is dict or isinstance(cur, Mapping) else None
        if cur is None:
            return {}
    return cur if type(cur) is dict or isinstance(cur, Mapping) else {}


def list_at(obj: Mapping[str, Any], *path: str) -> list[Any]:
    parent = map_at(obj, *path[:-1])
    value = parent.get(path[-1])
    if type(value) is list:
        return list(value)
    if value is None:
        return []
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []


def meta_of(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if type(obj) is dict:  # read for every field of every pod: plain dicts first
        meta = obj.get("metadata")
        if type(meta) is dict:
            return meta
    return map_at(obj, "metadata")


def _in_meta(obj: Mapping[str, Any] | None, key: str) -> Mapping[str, Any]:
    if type(obj) is dict:
        meta = obj.get("metadata")
        if type(meta) is dict:
            found = meta.get(key)
            if type(found) is dict:
                return found
    return map_at(obj, "metadata", key)


def labels_of(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _in_meta(obj, "labels")


def annotations_of(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _in_meta(obj, "annotations")


def parse_json(raw: Any, where: str) -> Any:
    """An annotation's JSON value; ConversionError naming `where` when it is not JSON."""
    try:
        return json.loads(raw)
    except (TypeError, ValueError) as err:
        raise ConversionError(f"{where}: not JSON ({err}): {str(raw)[:200]!r}") from None


def object_name(obj: Mapping[str, Any] | None) -> str:
    """`<namespace>/<name>` (or just the name for cluster-scoped objects)."""
    meta = meta_of(obj)
    ns, name = meta.get("namespace", ""), meta.get("name", "")
    return f"{ns}/{name}" if ns else str(name)


# --- pod size -------------------------------------------------------------------------------


def _shape(value: object) -> str:
    return "null" if value is None else f"a {type(value).__name__} ({value!r:.60})"


def _object_at(parent: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    """An optional nested object: absent or null is empty, anything but an object is refused."""
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConversionError(f"{where}.{key}: expected an object, got {_shape(value)}")
    return value


def _spec(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    """The pod's spec, refused (never read as a zero-size pod) when it is not an object with a
    non-empty `containers` list of objects."""
    spec = pod.get("spec")
    if type(spec) is dict:  # the usual shape, checked without building any message
        containers = spec.get("containers")
        inits = spec.get("initContainers")
        if (
            type(containers) is list
            and containers
            and all(type(c) is dict for c in containers)
            and (inits is None or (type(inits) is list and all(type(c) is dict for c in inits)))
        ):
            return spec
    where = f"pod {object_name(pod)} spec"
    if not isinstance(spec, Mapping):
        raise ConversionError(f"{where}: expected an object, got {'nothing' if 'spec' not in pod else _shape(spec)}")
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        got = "nothing" if "containers" not in spec else _shape(containers)
        raise ConversionError(f"{where}.containers: expected a non-empty list of containers, got {got}")
    for kind in ("containers", "initContainers"):
        entries = spec.get(kind)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise ConversionError(f"{where}.{kind}: expected a list of containers, got {_shape(entries)}")
        for index, container in enumerate(entries):
            if not isinstance(container, Mapping):
                raise ConversionError(f"{where}.{kind}[{index}]: expected a container object, got {_shape(container)}")
    return spec


def _checked(values: Mapping[str, Any], where: str) -> Resource:
    try:
        return resource_from_kubernetes(values, where)  # refuses negative quantities too
    except (QuantityError, TypeError) as err:
        raise ConversionError(str(err)) from None


def _requests(pod: Mapping[str, Any], container: Mapping[str, Any], kind: str) -> Resource:
    resources = container.get("resources")
    requests = resources.get("requests") if type(resources) is dict else None
    if type(requests) is dict or (requests is None and (resources is None or type(resources) is dict)):
        with suppress(QuantityError, TypeError):  # a bad value is reported below, with where it is
            return resource_from_kubernetes(requests or {})
    where = f"pod {object_name(pod)} {kind} {container.get('name', '?')!r}"
    resources = _object_at(container, "resources", where)
    return _checked(_object_at(resources, "requests", f"{where}.resources"), f"{where} requests")


def _resize_infeasible(pod: Mapping[str, Any]) -> bool:
    status = map_at(pod, "status")
    if status.get("resize") == "Infeasible":
        return True
    return any(
        isinstance(c, Mapping) and c.get("type") == "PodResizePending" and c.get("reason") == "Infeasible"
        for c in list_at(status, "conditions")
    )


def _held_by_kubelet(pod: Mapping[str, Any]) -> dict[str, Resource]:
    """Per container, the requests the kubelet reports it holds (status.containerStatuses[].
    resources.requests, else allocatedResources): a running pod resized in place."""
    held: dict[str, Resource] = {}
    for index, status in enumerate(list_at(pod, "status", "containerStatuses")):
        if not isinstance(status, Mapping) or not isinstance(status.get("name"), str):
            continue
        where = f"pod {object_name(pod)} status.containerStatuses[{index}]"
        requests = map_at(status, "resources", "requests") or map_at(status, "allocatedResources")
        if requests:
            held[status["name"]] = _checked(requests, where)
    return held


def _container_requests(pod: Mapping[str, Any], spec: Mapping[str, Any]) -> dict[str, int]:
    """Containers' requests summed, as kube-scheduler counts a pod being resized in place: the
    larger of what the spec asks and what the kubelet holds, or only what it holds when the
    resize is infeasible (it will never happen)."""
    held = _held_by_kubelet(pod)
    infeasible = _resize_infeasible(pod) if held else False
    total: dict[str, int] = {}
    for container in list_at(spec, "containers"):
        asked = _requests(pod, container, "container")
        actual = held.get(str(container.get("name", "")))
        if actual is not None:
            asked = actual if infeasible else Resource(_max(asked, actual))
        total = _add(total, asked)
    return total


def _add(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for key, value in b.items():
        out[key] = out.get(key, 0) + value
    return out


def _max(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for key, value in b.items():
        out[key] = max(out.get(key, 0), value)
    return out


def pod_resource(pod: Mapping[str, Any]) -> Resource:
    """What a pod occupies on its node (DESIGN "Queues and placement", pod size).

    Containers' requests summed; per resource the larger of that plus all sidecars (init
    containers with restartPolicy Always) and each init container's requests plus the sidecars
    started before it; pod-level requests replace what they name; plus overhead and `pods: 1`.
    A spec that cannot be read (no spec, no containers, a field of the wrong type, a malformed or
    negative quantity) raises ConversionError naming the field and value: never a zero-size pod.
    A running pod resized in place counts as kube-scheduler counts it (`_container_requests`).
    """
    spec = _spec(pod)
    total = _container_requests(pod, spec)
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in list_at(spec, "initContainers"):
        req = _requests(pod, container, "init container")
        if container.get("restartPolicy") == "Always":
            sidecars = _add(sidecars, req)
            init_peak = _max(init_peak, sidecars)
        else:
            init_peak = _max(init_peak, _add(req, sidecars))
    total = _max(_add(total, sidecars), init_peak)
    if spec.get("resources") is not None or spec.get("overhead") is not None:
        where = f"pod {object_name(pod)} spec"
        pod_level = _object_at(_object_at(spec, "resources", where), "requests", f"{where}.resources")
        if pod_level:
            total.update(_checked(pod_level, f"{where}.resources.requests"))
        total = _add(total, _checked(_object_at(spec, "overhead", where), f"{where}.overhead"))
    total[PODS] = 1
    return Resource(total)


# --- constraints ----------------------------------------------------------------------------


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


def pod_constraints(pod: Mapping[str, Any]) -> NodeConstraints:
    spec = map_at(pod, "spec")
    affinity = map_at(spec, "affinity")
    node_aff = map_at(affinity, "nodeAffinity")
    required = map_at(node_aff, "requiredDuringSchedulingIgnoredDuringExecution")
    terms = tuple(node_selector_term(t) for t in list_at(required, "nodeSelectorTerms") if isinstance(t, Mapping))
    tolerations = tuple(
        Toleration(
            key=str(t.get("key") or ""),
            operator=str(t.get("operator") or "Equal"),
            value=str(t.get("value") or ""),
            effect=str(t.get("effect") or ""),
        )
        for t in list_at(spec, "tolerations")
        if isinstance(t, Mapping)
    )
    selector = map_at(spec, "nodeSelector")
    return NodeConstraints(
        node_selector=tuple(sorted((str(k), str(v)) for k, v in selector.items())),
        required_terms=terms,
        tolerations=tolerations,
    )


def allows_preemption(pod: Mapping[str, Any]) -> bool:
    """False when the pod carries `yunikorn.apache.org/allow-preemption: "false"` (YuniKorn's
    admission controller copies it from the pod's PriorityClass; the pod's own value wins)."""
    return str(annotations_of(pod).get(ANNOTATION_ALLOW_PREEMPTION, "true")).strip().lower() != "false"


def with_priority_class(pod: dict[str, Any], priority_class: Mapping[str, Any] | None) -> dict[str, Any]:
    """The pod as admission leaves it: `spec.priority` from its PriorityClass's `value` (when
    the pod sets none), and the class's `allow-preemption` annotation copied onto the pod
    unless the pod sets its own (what YuniKorn's admission controller does)."""
    if priority_class is None:
        return pod
    spec = pod.setdefault("spec", {})
    value = priority_class.get("value")
    if spec.get("priority") is None and isinstance(value, int) and not isinstance(value, bool):
        spec["priority"] = value
    opt_out = annotations_of(priority_class).get(ANNOTATION_ALLOW_PREEMPTION)
    if opt_out is not None:
        meta = pod.setdefault("metadata", {})
        annotations = meta.get("annotations")
        annotations = dict(annotations) if isinstance(annotations, Mapping) else {}
        annotations.setdefault(ANNOTATION_ALLOW_PREEMPTION, str(opt_out))
        meta["annotations"] = annotations
    return pod
