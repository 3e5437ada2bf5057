"""How much a pod occupies on its node, read from its spec (and, for a pod resized in place,
from what the kubelet reports it holds)."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from typing import Any

from core.kept import KeptTable
from core.resources import QuantityError, Resource, resource_from_kubernetes
from shim.convert.objects import ConversionError, list_at, map_at
from shim.convert.pod_view import PodLike, PodView, as_view

PODS = "pods"


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


def _check_spec(pod: PodView) -> None:
    """Refuses (never reads as a zero-size pod) a spec that is not an object with a non-empty
    `containers` list of objects."""
    containers, inits = pod.containers, pod.spec.get("initContainers")  # as given: a wrong shape is refused
    if (
        type(pod.spec) is dict  # the usual shape, checked without building any message
        and type(containers) is list
        and containers
        and all(type(c) is dict for c in containers)
        and (inits is None or (type(inits) is list and all(type(c) is dict for c in inits)))
    ):
        return
    where = f"pod {pod.name} spec"
    spec = pod.raw.get("spec")
    if not isinstance(spec, Mapping):
        raise ConversionError(
            f"{where}: expected an object, got {'nothing' if 'spec' not in pod.raw else _shape(spec)}"
        )
    given = spec.get("containers")
    if not isinstance(given, list) or not given:
        got = "nothing" if "containers" not in spec else _shape(given)
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


def _checked(values: Mapping[str, Any], where: str) -> Resource:
    try:
        return resource_from_kubernetes(values, where)  # refuses negative quantities too
    except (QuantityError, TypeError) as err:
        raise ConversionError(str(err)) from None


# Containers of one workload ask for the same few sizes: a requests map is parsed once. Only maps
# whose values are all strings are kept (a string equals no value of another type, so no other
# map finds their answer).
_parsed: KeptTable[tuple[tuple[str, Any], ...], Resource] = KeptTable(4096)


def _requests(pod: PodView, container: Mapping[str, Any], kind: str) -> Resource:
    resources = container.get("resources")
    requests = resources.get("requests") if type(resources) is dict else None
    if type(requests) is dict:
        key = tuple(requests.items())
        with suppress(TypeError):  # a value that cannot be hashed: read below
            found = _parsed.get(key)
            if found is not None:
                return found
        with suppress(QuantityError, TypeError):  # a bad value is reported below, with where it is
            found = resource_from_kubernetes(requests)
            if all(type(value) is str for value in requests.values()):
                _parsed.keep(key, found)
            return found
    elif requests is None and (resources is None or type(resources) is dict):
        with suppress(QuantityError, TypeError):  # a bad value is reported below, with where it is
            return resource_from_kubernetes(requests or {})
    where = f"pod {pod.name} {kind} {container.get('name', '?')!r}"
    resources = _object_at(container, "resources", where)
    return _checked(_object_at(resources, "requests", f"{where}.resources"), f"{where} requests")


def _resize_infeasible(pod: PodView) -> bool:
    status = pod.status
    if status.get("resize") == "Infeasible":
        return True
    return any(
        isinstance(c, Mapping) and c.get("type") == "PodResizePending" and c.get("reason") == "Infeasible"
        for c in list_at(status, "conditions")
    )


def _held_by_kubelet(pod: PodView) -> dict[str, Resource]:
    """Per container, the requests the kubelet reports it holds (status.containerStatuses[].
    resources.requests, else allocatedResources): a running pod resized in place."""
    held: dict[str, Resource] = {}
    for index, status in enumerate(list_at(pod.status, "containerStatuses")):
        if not isinstance(status, Mapping) or not isinstance(status.get("name"), str):
            continue
        where = f"pod {pod.name} status.containerStatuses[{index}]"
        requests = map_at(status, "resources", "requests") or map_at(status, "allocatedResources")
        if requests:
            held[status["name"]] = _checked(requests, where)
    return held


def _container_requests(pod: PodView) -> dict[str, int]:
    """Containers' requests summed, as kube-scheduler counts a pod being resized in place: the
    larger of what the spec asks and what the kubelet holds, or only what it holds when the
    resize is infeasible (it will never happen)."""
    held = _held_by_kubelet(pod) if pod.status else {}
    infeasible = _resize_infeasible(pod) if held else False
    total: dict[str, int] = {}
    for container in pod.containers:
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


def pod_resource(pod: PodLike) -> Resource:
    """What a pod occupies on its node (DESIGN "Queues and placement", pod size).

    Containers' requests summed; per resource the larger of that plus all sidecars (init
    containers with restartPolicy Always) and each init container's requests plus the sidecars
    started before it; pod-level requests replace what they name; plus overhead and `pods: 1`.
    A spec that cannot be read (no spec, no containers, a field of the wrong type, a malformed or
    negative quantity) raises ConversionError naming the field and value: never a zero-size pod.
    A running pod resized in place counts as kube-scheduler counts it (`_container_requests`).
    """
    pod = as_view(pod)
    _check_spec(pod)
    spec = pod.spec
    total = _container_requests(pod)
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in pod.init_containers:
        req = _requests(pod, container, "init container")
        if container.get("restartPolicy") == "Always":
            sidecars = _add(sidecars, req)
            init_peak = _max(init_peak, sidecars)
        else:
            init_peak = _max(init_peak, _add(req, sidecars))
    total = _max(_add(total, sidecars), init_peak)
    if spec.get("resources") is not None or spec.get("overhead") is not None:
        where = f"pod {pod.name} spec"
        pod_level = _object_at(_object_at(spec, "resources", where), "requests", f"{where}.resources")
        if pod_level:
            total.update(_checked(pod_level, f"{where}.resources.requests"))
        total = _add(total, _checked(_object_at(spec, "overhead", where), f"{where}.overhead"))
    total[PODS] = 1
    return Resource(total)
