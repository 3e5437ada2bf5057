"""A pod read once: the fields every reader of this room needs, taken out of the API's dict in
one pass (metadata, labels, annotations, owners, the spec's parts, status) so that the readers
of its size, constraints, rules, identity, gang and claims do not each walk the dict again.

Reading never fails: a field of the wrong shape reads as absent or empty here, and the reader
that owns the field decides whether that is an error (the pod's size refuses a spec without
containers, naming it; `raw` keeps the pod as given for those messages and for writers).

Every reader takes a pod either as the dict or as its view (`PodLike`); `as_view` reads a dict
and passes a view through, so a caller that reads one pod several ways (`PodSync.apply`) reads
it once and hands the view around.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class PodView(NamedTuple):
    """One pod's fields as this room reads them (a named tuple: one is made for every pod event)."""

    raw: Mapping[str, Any]  # the pod as given
    name: str  # "<namespace>/<name>" (just the name without a namespace): how messages name it
    pod_name: str  # metadata.name
    namespace: str  # metadata.namespace, "" when unset
    uid: str
    labels: Mapping[str, Any]
    annotations: Mapping[str, Any]
    owners: tuple[Mapping[str, Any], ...]  # ownerReferences that are objects
    created: Any  # metadata.creationTimestamp as given (read, or refused, by the pod's ask)
    deleting: bool  # metadata.deletionTimestamp is set
    spec: Mapping[str, Any]  # empty when absent or not an object (the pod's size refuses that)
    scheduler_name: Any  # spec.schedulerName as given
    node: str | None  # spec.nodeName, None when unbound
    priority: Any  # spec.priority as given (read, or refused, by the pod's ask)
    containers: Sequence[Any]  # spec.containers, empty when absent or not a list
    init_containers: Sequence[Any]  # spec.initContainers, the same
    affinity: Mapping[str, Any]  # spec.affinity
    volumes: Sequence[Any]  # spec.volumes
    status: Mapping[str, Any]
    phase: Any  # status.phase as given
    started: Any  # status.startTime as given


PodLike = Mapping[str, Any] | PodView


def _mapping(value: Any) -> Mapping[str, Any]:
    if type(value) is dict or isinstance(value, Mapping):
        return value
    return _EMPTY


def _sequence(value: Any) -> Sequence[Any]:
    if type(value) is list:
        return value
    if value is None or isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        return ()
    return value


def read_pod(pod: Mapping[str, Any]) -> PodView:
    """The pod's view; `pod` is any mapping shaped as the API returns a Pod (or less)."""
    # Read for every pod event: the usual shapes (dicts and lists) are taken at a type check,
    # the abstract Mapping/Sequence checks (an ABC lookup each) are left for anything else.
    meta = pod.get("metadata")
    if type(meta) is not dict:
        meta = _mapping(meta)
    spec = pod.get("spec")
    if type(spec) is not dict:
        spec = _mapping(spec)
    status = pod.get("status")
    if type(status) is not dict:
        status = _mapping(status)
    labels = meta.get("labels")
    if type(labels) is not dict:
        labels = _mapping(labels)
    annotations = meta.get("annotations")
    if type(annotations) is not dict:
        annotations = _mapping(annotations)
    owners = meta.get("ownerReferences")
    affinity = spec.get("affinity")
    if affinity is None:
        affinity = _EMPTY
    elif type(affinity) is not dict:
        affinity = _mapping(affinity)
    namespace, pod_name = meta.get("namespace", ""), meta.get("name", "")
    uid = meta.get("uid")
    node = spec.get("nodeName")
    containers = spec.get("containers")
    inits = spec.get("initContainers")
    volumes = spec.get("volumes")
    return PodView(
        pod,
        f"{namespace}/{pod_name}" if namespace else str(pod_name),
        str(pod_name) if pod_name else "",
        str(namespace) if namespace else "",
        str(uid) if uid else "",
        labels,
        annotations,
        tuple(o for o in _sequence(owners) if type(o) is dict or isinstance(o, Mapping)) if owners else (),
        meta.get("creationTimestamp"),
        bool(meta.get("deletionTimestamp")),
        spec,
        spec.get("schedulerName"),
        str(node) if node else None,
        spec.get("priority"),
        containers if type(containers) is list else _sequence(containers),
        () if inits is None else inits if type(inits) is list else _sequence(inits),
        affinity,
        () if volumes is None else volumes if type(volumes) is list else _sequence(volumes),
        status,
        status.get("phase"),
        status.get("startTime"),
    )


def as_view(pod: PodLike) -> PodView:
    """The pod's view: read from a dict, or the view itself when the caller has read it already."""
    return pod if isinstance(pod, PodView) else read_pod(pod)
