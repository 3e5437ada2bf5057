"""PodDisruptionBudgets (policy/v1) to the core's `DisruptionBudget`: the namespace, the name,
the pod selector and `status.disruptionsAllowed`, the count the disruption controller keeps of
how many of its pods may go now (preemption prefers victims no budget protects)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.objects.disruption_budget import DisruptionBudget
from shim.convert.objects import ConversionError, map_at, meta_of
from shim.convert.rules import label_selector


def budget_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = meta_of(obj)
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def budget_from(obj: Mapping[str, Any]) -> DisruptionBudget:
    """The budget as the core weighs it; ConversionError names a field it cannot read."""
    namespace, name = budget_key(obj)
    where = f"PodDisruptionBudget {namespace}/{name}"
    selector = label_selector(map_at(obj, "spec").get("selector"), f"{where} spec.selector")
    allowed = map_at(obj, "status").get("disruptionsAllowed", 0)
    if isinstance(allowed, bool) or not isinstance(allowed, int) or allowed < 0:
        raise ConversionError(f"{where} status.disruptionsAllowed: expected a count, got {allowed!r}")
    return DisruptionBudget(namespace, name, selector, allowed)
