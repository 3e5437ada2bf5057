"""An ElasticQuota as the core sees it (Koordinator's keys already read by the shim)."""

from __future__ import annotations

from dataclasses import dataclass

from core.resources import Resource

SYSTEM_QUOTA = "system"
DEFAULT_QUOTA = "default"
ROOT_QUOTA = "root"


@dataclass(frozen=True, slots=True)
class ElasticQuotaSpec:
    name: str
    namespace: str = ""
    min: Resource = Resource()
    max: Resource = Resource()
    parent: str = ""  # "" means the root
    is_parent: bool = False
    allow_lent_resource: bool = True
    shared_weight: Resource | None = None  # None: spec.max
