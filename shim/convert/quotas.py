"""Koordinator's ElasticQuota objects -> the core's quota specs, and the labels and annotations
of Koordinator's quota API (a pod's quota and preemptibility among them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.elastic.spec import DEFAULT_QUOTA, SYSTEM_QUOTA, ElasticQuotaSpec
from core.resources import QuantityError, Resource, resource_from_kubernetes
from shim.convert.objects import ConversionError, annotations_of, labels_of, map_at, meta_of, object_name
from shim.convert.resource_text import annotation_resource

KOORD_PREFIX = "quota.scheduling.koordinator.sh/"
LABEL_QUOTA_NAME = KOORD_PREFIX + "name"
LABEL_PREEMPTIBLE = KOORD_PREFIX + "preemptible"
LABEL_PARENT = KOORD_PREFIX + "parent"
LABEL_IS_PARENT = KOORD_PREFIX + "is-parent"
LABEL_ALLOW_LENT = KOORD_PREFIX + "allow-lent-resource"
ANNOTATION_SHARED_WEIGHT = KOORD_PREFIX + "shared-weight"
# Koordinator's objects for the quota groups outside the tree, read as Herder's groups.
GROUP_ALIASES = {"koordinator-system-quota": SYSTEM_QUOTA, "koordinator-default-quota": DEFAULT_QUOTA}
ANNOTATION_RUNTIME = KOORD_PREFIX + "runtime"
ANNOTATION_REQUEST = KOORD_PREFIX + "request"
ANNOTATION_CHILD_REQUEST = KOORD_PREFIX + "child-request"
ANNOTATION_GUARANTEED = KOORD_PREFIX + "guaranteed"
ANNOTATION_ALLOCATED = KOORD_PREFIX + "allocated"
ANNOTATION_NON_PREEMPTIBLE_REQUEST = KOORD_PREFIX + "non-preemptible-request"
ANNOTATION_NON_PREEMPTIBLE_USED = KOORD_PREFIX + "non-preemptible-used"


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


def quota_to_spec(eq: Mapping[str, Any]) -> ElasticQuotaSpec:
    """An ElasticQuota object with Koordinator's labels and annotations; Koordinator's names of the
    system and default groups stand for Herder's `system` and `default`. `shared-weight` may be
    JSON or seed 002's `{cpu: 4, memory: 8Gi}` shorthand."""
    meta, labels, annotations = meta_of(eq), labels_of(eq), annotations_of(eq)
    where = f"ElasticQuota {object_name(eq)}"
    raw_spec = eq.get("spec")
    if not isinstance(raw_spec, Mapping):
        # A spec that is not a mapping would read as no max at all: unlimited.
        raise ConversionError(f"{where} spec: expected a mapping with min and max, got {_kind(raw_spec)}")
    for part in ("min", "max"):
        if raw_spec.get(part) is not None and not isinstance(raw_spec.get(part), Mapping):
            raise ConversionError(f"{where} spec.{part}: expected a mapping of quantities, got {_kind(raw_spec[part])}")
    spec = map_at(eq, "spec")
    try:
        minimum = resource_from_kubernetes(map_at(spec, "min"), f"{where} spec.min")
        maximum = resource_from_kubernetes(map_at(spec, "max"), f"{where} spec.max")
    except QuantityError as err:
        raise ConversionError(str(err)) from None
    shared: Resource | None = None
    if ANNOTATION_SHARED_WEIGHT in annotations:
        shared = annotation_resource(annotations, ANNOTATION_SHARED_WEIGHT, where, shorthand=True)
    name = str(meta.get("name", ""))
    return ElasticQuotaSpec(
        name=GROUP_ALIASES.get(name, name),
        namespace=str(meta.get("namespace", "")),
        min=minimum,
        max=maximum,
        parent=str(labels.get(LABEL_PARENT) or ""),
        is_parent=labels.get(LABEL_IS_PARENT) == "true",
        allow_lent_resource=labels.get(LABEL_ALLOW_LENT) != "false",
        shared_weight=shared,
    )
