"""Where a workload keeps the pod templates its controller copies into pods, for every kind.

A controller (trusted) creates pods from a workload's templates with whatever identity the
templates carry, so every template of every kind a user can create must be stamped and
checked like a pod. The built-in kinds are listed here; custom kinds (Spark, Ray, MPI,
training jobs) are added with the `admission.templatePaths` setting, one `Kind=path` entry
per template:

    RayCluster=spec.headGroupSpec.template
    RayCluster=spec.workerGroupSpecs.*.template
    MPIJob=spec.mpiReplicaSpecs.*.template
    SparkApplication=spec.driver.annotations

A path is dot-separated keys; `*` stands for every item of a list (or value of a mapping). It
names a pod template (an object whose `metadata.annotations` the pods get) or, when its last
key is `annotations`, the annotations mapping itself (Spark's driver and executor).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

BUILTIN_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec.template",),
    "ReplicaSet": ("spec.template",),
    "StatefulSet": ("spec.template",),
    "DaemonSet": ("spec.template",),
    "Job": ("spec.template",),
    "CronJob": ("spec.jobTemplate.spec.template",),
    "ReplicationController": ("spec.template",),
    "PodTemplate": ("template",),
}

Location = tuple[str | int, ...]  # concrete keys and list indexes from the object's root


def parse_template_paths(entries: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """`Kind=path` entries (checked by the settings) as paths per kind."""
    paths: dict[str, tuple[str, ...]] = {}
    for entry in entries:
        kind, _, path = entry.partition("=")
        paths[kind.strip()] = (*paths.get(kind.strip(), ()), path.strip())
    return paths


def _walk(value: Any, parts: list[str], here: Location) -> Iterator[tuple[Location, Any]]:
    """Every (location, value) the path reaches; missing keys reach nothing."""
    stack: list[tuple[Any, int, Location]] = [(value, 0, here)]
    while stack:
        current, depth, where = stack.pop()
        if depth == len(parts):
            yield where, current
            continue
        part = parts[depth]
        if part == "*":
            if isinstance(current, list):
                stack.extend((item, depth + 1, (*where, i)) for i, item in enumerate(current))
            elif isinstance(current, Mapping):
                stack.extend((item, depth + 1, (*where, str(k))) for k, item in current.items())
        elif isinstance(current, Mapping) and part in current:
            stack.append((current[part], depth + 1, (*where, part)))


def templates(obj: Mapping[str, Any], paths: Sequence[str]) -> list[tuple[Location, Mapping[str, Any]]]:
    """The annotations of each template `paths` reach, by location (missing ones as {}).

    A template (or the holder of an `annotations` path) that exists without annotations still
    counts, so it is stamped; a path that reaches nothing is skipped.
    """
    found: list[tuple[Location, Mapping[str, Any]]] = []
    for path in paths:
        parts = path.split(".")
        direct = parts[-1] == "annotations"
        holder_parts, holder_key = (parts[:-1], ("annotations",)) if direct else (parts, ("metadata", "annotations"))
        for where, holder in _walk(obj, holder_parts, ()):
            if not isinstance(holder, Mapping):
                continue
            annotations: Any = holder
            for step in holder_key:
                annotations = annotations.get(step) if isinstance(annotations, Mapping) else None
            found.append(((*where, *holder_key), annotations if isinstance(annotations, Mapping) else {}))
    return sorted(found, key=lambda item: [str(step) for step in item[0]])


def stamp_patch(obj: Mapping[str, Any], locations: Sequence[Location], key: str, value: str) -> dict[str, Any]:
    """A JSON merge patch setting annotation `key` at each location (an annotations mapping).

    Merge patches cannot reach into a list, so below a list the whole list is given, copied
    from `obj` with the annotation set.
    """
    changed: Any = copy.deepcopy(dict(obj))
    for location in locations:
        target = changed
        for step in location:
            if isinstance(target, list):
                target = target[step]  # type: ignore[index]
            else:
                if not isinstance(target.get(step), (dict, list)):
                    target[step] = {}
                target = target[step]
        target[key] = value
    patch: dict[str, Any] = {}
    for location in locations:
        cut = next((i for i, step in enumerate(location) if isinstance(step, int)), None)
        prefix = location if cut is None else location[:cut]  # up to the annotations, or to the list
        node = patch
        for step in prefix[:-1]:
            node = node.setdefault(str(step), {})
        if cut is None:
            node.setdefault(str(prefix[-1]), {})[key] = value
        else:
            whole: Any = changed
            for step in prefix:
                whole = whole[step]
            node[str(prefix[-1])] = whole
    return patch
