"""A Namespace's YuniKorn annotations -> the application tags its pods carry (parent queue,
quota, guaranteed, max applications), and the problems of the malformed ones."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core.objects.ask import TAG_GUARANTEED, TAG_MAX_APPS, TAG_NAMESPACE, TAG_PARENT_QUEUE, TAG_QUOTA
from core.resources import QuantityError, resource_from_kubernetes
from shim.convert.objects import ConversionError, annotations_of, meta_of
from shim.convert.resource_text import annotation_resource
from shim.interning import ByIdentity

YK_PREFIX = "yunikorn.apache.org/"
ANNOTATION_PARENT_QUEUE = YK_PREFIX + "parentqueue"
ANNOTATION_NS_QUOTA = YK_PREFIX + "namespace.quota"
ANNOTATION_NS_MAX_CPU = YK_PREFIX + "namespace.max.cpu"
ANNOTATION_NS_MAX_MEMORY = YK_PREFIX + "namespace.max.memory"
ANNOTATION_NS_GUARANTEED = YK_PREFIX + "namespace.guaranteed"
ANNOTATION_NS_MAX_APPS = YK_PREFIX + "namespace.maxApps"


def _canonical(resource: Mapping[str, int]) -> str:
    return json.dumps(dict(resource), sort_keys=True, separators=(", ", ": "))


_namespace_reads: ByIdentity[Mapping[str, Any], tuple[dict[str, str], list[str]]] = ByIdentity()


def namespace_read(namespace: Mapping[str, Any] | None) -> tuple[dict[str, str], list[str]]:
    """The namespace's tags (shared by every pod of the namespace: nobody changes them) and problems."""
    if not namespace:
        return {}, []
    tags, problems = _namespace_reads(namespace, _read_namespace)
    return tags, list(problems)


def _read_namespace(namespace: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    name = str(meta_of(namespace).get("name", ""))
    where = f"namespace {name}"
    annotations = annotations_of(namespace)
    tags: dict[str, str] = {TAG_NAMESPACE: name}
    problems: list[str] = []
    parent = annotations.get(ANNOTATION_PARENT_QUEUE)
    if isinstance(parent, str) and parent:
        tags[TAG_PARENT_QUEUE] = parent
    if ANNOTATION_NS_QUOTA in annotations:
        try:
            tags[TAG_QUOTA] = _canonical(annotation_resource(annotations, ANNOTATION_NS_QUOTA, where))
        except ConversionError as err:
            problems.append(str(err))
    else:
        legacy: dict[str, int] = {}
        for key, resource in ((ANNOTATION_NS_MAX_CPU, "cpu"), (ANNOTATION_NS_MAX_MEMORY, "memory")):
            if key in annotations:
                try:
                    legacy.update(resource_from_kubernetes({resource: annotations[key]}, f"{where} annotation {key}"))
                except QuantityError as err:
                    problems.append(f"{err} (value {annotations[key]!r})")
        if legacy:
            tags[TAG_QUOTA] = _canonical(legacy)
    if ANNOTATION_NS_GUARANTEED in annotations:
        try:
            tags[TAG_GUARANTEED] = _canonical(annotation_resource(annotations, ANNOTATION_NS_GUARANTEED, where))
        except ConversionError as err:
            problems.append(str(err))
    if ANNOTATION_NS_MAX_APPS in annotations:
        raw = annotations[ANNOTATION_NS_MAX_APPS]
        try:
            value = int(str(raw).strip())
            if value < 0:
                raise ValueError
            tags[TAG_MAX_APPS] = str(value)
        except ValueError:
            problems.append(f"{where} annotation {ANNOTATION_NS_MAX_APPS}: expected an integer >= 0, got {raw!r}")
    return tags, problems


def namespace_tags(namespace: Mapping[str, Any] | None) -> dict[str, str]:
    """Application tags from a Namespace's annotations; malformed annotations are left out."""
    return namespace_read(namespace)[0]


def namespace_problems(namespace: Mapping[str, Any] | None) -> list[str]:
    """Malformed Herder annotations on a Namespace, each naming namespace, key and value."""
    return namespace_read(namespace)[1]
