"""StorageClasses, PersistentVolumes, PersistentVolumeClaims and a pod's claims, as the core sees them.

Shared by the operator's storage watches and the simulator. An object that cannot be read is
never dropped silently: a claim keeps a `problem` (its pods wait naming it), a volume or class
raises ConversionError naming the field so the caller reports it and keeps the last good state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.objects.constraints import NodeSelectorRequirement, NodeSelectorTerm
from core.objects.volumes import (
    SELECTED_NODE,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from core.resources import QuantityError, quantity_value
from shim.convert.constraints import node_selector_term
from shim.convert.objects import ConversionError, annotations_of, list_at, map_at, meta_of
from shim.convert.pod_view import PodLike, as_view
from shim.convert.rules import string_labels

DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


def claim_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def pod_claims(pod: PodLike) -> tuple[str, ...]:
    """The claims a pod mounts: named ones, and generic ephemeral volumes' `<pod>-<volume>`."""
    pod = as_view(pod)
    if not pod.volumes:
        return ()
    namespace, pod_name = pod.namespace or "default", pod.pod_name
    claims: list[str] = []
    for volume in pod.volumes:
        if type(volume) is not dict and not isinstance(volume, Mapping):
            continue
        named = volume.get("persistentVolumeClaim")
        if named is not None and isinstance(named, Mapping) and named.get("claimName"):
            claims.append(claim_key(namespace, str(named["claimName"])))
        elif volume.get("ephemeral") is not None and isinstance(volume.get("ephemeral"), Mapping):
            claims.append(claim_key(namespace, f"{pod_name}-{volume.get('name', '')}"))
    return tuple(dict.fromkeys(claims))


def _storage(raw: Mapping[str, Any], where: str) -> int:
    value = raw.get("storage")
    if value is None:
        return 0
    try:
        return quantity_value(value)
    except (QuantityError, TypeError, ValueError):
        raise ConversionError(f"{where}.storage: {value!r} is not a quantity") from None


def _modes(obj: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(str(mode) for mode in list_at(obj, "spec", "accessModes"))


def claim_from(claim: Mapping[str, Any]) -> PersistentVolumeClaim:
    meta, spec = meta_of(claim), map_at(claim, "spec")
    key = claim_key(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
    storage_class = spec.get("storageClassName")
    try:
        request = _storage(map_at(spec, "resources", "requests"), f"claim {key} spec.resources.requests")
    except ConversionError as err:
        return PersistentVolumeClaim(key=key, problem=str(err))
    return PersistentVolumeClaim(
        key=key,
        storage_class=None if storage_class is None else str(storage_class),
        volume_name=str(spec.get("volumeName") or ""),
        request=request,
        access_modes=_modes(claim),
        selected_node=str(annotations_of(claim).get(SELECTED_NODE) or ""),
    )


def volume_from(volume: Mapping[str, Any]) -> PersistentVolume:
    meta, spec = meta_of(volume), map_at(volume, "spec")
    name = str(meta.get("name") or "")
    ref = map_at(spec, "claimRef")
    claim = claim_key(str(ref.get("namespace") or "default"), str(ref["name"])) if ref.get("name") else ""
    terms = tuple(node_selector_term(term) for term in list_at(spec, "nodeAffinity", "required", "nodeSelectorTerms"))
    phase = str(map_at(volume, "status").get("phase") or "")
    return PersistentVolume(
        name=name,
        storage_class=str(spec.get("storageClassName") or ""),
        capacity=_storage(map_at(spec, "capacity"), f"persistentvolume {name} spec.capacity"),
        access_modes=_modes(volume),
        node_affinity=terms,
        labels=string_labels(volume),
        claim=claim,
        released=phase in ("Released", "Failed"),
    )


def storage_class_from(storage_class: Mapping[str, Any]) -> StorageClass:
    name = str(meta_of(storage_class).get("name") or "")
    terms = []
    for n, raw in enumerate(list_at(storage_class, "allowedTopologies")):
        if not isinstance(raw, Mapping):
            raise ConversionError(f"storageclass {name} allowedTopologies[{n}]: expected an object")
        requirements = tuple(
            NodeSelectorRequirement(str(expr.get("key", "")), "In", tuple(str(v) for v in expr.get("values") or ()))
            for expr in list_at(raw, "matchLabelExpressions")
            if isinstance(expr, Mapping)
        )
        terms.append(NodeSelectorTerm(requirements))
    return StorageClass(
        name=name,
        provisioner=str(storage_class.get("provisioner") or ""),
        wait_for_first_consumer=storage_class.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER,
        allowed_topologies=tuple(terms),
        default=str(annotations_of(storage_class).get(DEFAULT_CLASS, "")).lower() == "true",
    )
