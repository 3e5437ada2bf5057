"""What the shim tells the core about a node."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.objects.constraints import Taint
from core.resources import Resource


@dataclass(frozen=True, slots=True)
class NodeInfo:
    node_id: str
    capacity: Resource  # allocatable, in core units (includes `pods`)
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    schedulable: bool = True  # False when cordoned (spec.unschedulable)
    ready: bool = True
