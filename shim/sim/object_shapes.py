"""The shape of the Kubernetes objects the simulator plays other controllers for.

The simulator is the API server and the storage controllers as well as the scheduler's feed:
it reads and writes parts of claims, volumes, classes, budgets and pods' volumes itself (a
volume's `claimRef`, a claim's `status`, an ephemeral volume's template). The API server would
refuse an object whose parts have the wrong type (a claim's `spec` that is a string), so a
scenario holding one is refused when it is read, naming the entry and the key, as `kubectl
apply` would name the field. Values inside the right shapes (a quantity that is not one, an
unknown access mode) are left to the conversion code at run time, as in a cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MAPPING = "a mapping"
LIST = "a list"
TEXT = "a string"

# Per kind: the dotted paths the simulator or its conversion reads, and what each must be.
SHAPES: dict[str, tuple[tuple[str, str], ...]] = {
    "PersistentVolumeClaim": (
        ("spec", MAPPING),
        ("spec.resources", MAPPING),
        ("spec.resources.requests", MAPPING),
        ("spec.accessModes", LIST),
        ("spec.storageClassName", TEXT),
        ("spec.volumeName", TEXT),
        ("status", MAPPING),
    ),
    "PersistentVolume": (
        ("spec", MAPPING),
        ("spec.capacity", MAPPING),
        ("spec.accessModes", LIST),
        ("spec.storageClassName", TEXT),
        ("spec.claimRef", MAPPING),
        ("spec.nodeAffinity", MAPPING),
        ("spec.nodeAffinity.required", MAPPING),
        ("spec.nodeAffinity.required.nodeSelectorTerms", LIST),
        ("status", MAPPING),
    ),
    "StorageClass": (
        ("provisioner", TEXT),
        ("volumeBindingMode", TEXT),
        ("allowedTopologies", LIST),
    ),
    "PodDisruptionBudget": (
        ("spec", MAPPING),
        ("spec.selector", MAPPING),
    ),
}
# A pod's volumes, each a mapping; an ephemeral volume's claim template is made into a claim.
VOLUME_SHAPES = (
    ("persistentVolumeClaim", MAPPING),
    ("ephemeral", MAPPING),
    ("ephemeral.volumeClaimTemplate", MAPPING),
    ("ephemeral.volumeClaimTemplate.metadata", MAPPING),
    ("ephemeral.volumeClaimTemplate.spec", MAPPING),
    *((f"ephemeral.volumeClaimTemplate.{path}", what) for path, what in SHAPES["PersistentVolumeClaim"][1:5]),
)


def shape_problems(kind: str, obj: Mapping[str, Any], where: str) -> list[str]:
    """`<where>.<path>: expected ..., got ...` for each part of the object of the wrong type."""
    return _check(obj, SHAPES.get(kind, ()), where)


def pod_volume_problems(spec: Mapping[str, Any], where: str) -> list[str]:
    """The same for a pod's `spec.volumes` (`where` names the pod's spec)."""
    volumes = spec.get("volumes")
    if volumes is None:
        return []
    if not isinstance(volumes, list):
        return [f"{where}.volumes: expected {LIST}, got {_kind(volumes)}"]
    problems: list[str] = []
    for i, volume in enumerate(volumes):
        if not isinstance(volume, Mapping):
            problems.append(f"{where}.volumes[{i}]: expected {MAPPING}, got {_kind(volume)}")
        else:
            problems.extend(_check(volume, VOLUME_SHAPES, f"{where}.volumes[{i}]"))
    return problems


def _check(obj: Mapping[str, Any], shapes: Sequence[tuple[str, str]], where: str) -> list[str]:
    problems: list[str] = []
    wrong: set[str] = set()  # paths already reported: what is under them is not looked at
    for path, expected in shapes:
        parent, _, key = path.rpartition(".")
        if any(path == w or path.startswith(w + ".") for w in wrong):
            continue
        container = _at(obj, parent) if parent else obj
        if not isinstance(container, Mapping):
            continue  # a missing parent: nothing under it to read
        value = container.get(key)
        if value is None or _is(value, expected):
            continue
        wrong.add(path)
        problems.append(f"{where}.{path}: expected {expected}, got {_kind(value)}")
    return problems


def _at(obj: Mapping[str, Any], path: str) -> object:
    current: object = obj
    for key in path.split("."):
        if not isinstance(current, Mapping):
            return None
        current = current.get(key)
    return current


def _is(value: object, expected: str) -> bool:
    if expected == MAPPING:
        return isinstance(value, Mapping)
    if expected == LIST:
        return isinstance(value, list)
    return isinstance(value, str)


def _kind(value: object) -> str:
    return "nothing" if value is None else f"{type(value).__name__} {_short(value)}"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
