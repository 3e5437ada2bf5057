"""A Node -> the core's NodeInfo: allocatable capacity, labels, taints, schedulable and ready."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.objects.constraints import Taint
from core.objects.node_info import NodeInfo
from core.resources import QuantityError, resource_from_kubernetes
from shim.convert.objects import ConversionError, labels_of, list_at, map_at, meta_of


def node_to_info(node: Mapping[str, Any]) -> NodeInfo:
    name = str(meta_of(node).get("name", ""))
    try:
        capacity = resource_from_kubernetes(map_at(node, "status", "allocatable"), f"node {name} status.allocatable")
    except QuantityError as err:
        raise ConversionError(str(err)) from None
    taints = tuple(
        Taint(
            key=str(t.get("key", "")),
            value=str(t.get("value") or ""),
            effect=str(t.get("effect") or "NoSchedule"),
        )
        for t in list_at(node, "spec", "taints")
        if isinstance(t, Mapping)
    )
    conditions = [c for c in list_at(node, "status", "conditions") if isinstance(c, Mapping)]
    ready_conditions = [c for c in conditions if c.get("type") == "Ready"]
    ready = all(c.get("status") == "True" for c in ready_conditions)
    return NodeInfo(
        node_id=name,
        capacity=capacity,
        labels={str(k): str(v) for k, v in labels_of(node).items()},
        taints=taints,
        schedulable=not map_at(node, "spec").get("unschedulable", False),
        ready=ready,
    )
