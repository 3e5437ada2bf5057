"""The scheduler configuration as typed, immutable values.

These are YuniKorn's `queues.yaml` shapes after parsing: `parse.py` builds them from YAML
(strictly: unknown keys are errors), `validate.py` checks them as a whole, and the scheduler
applies a `SchedulerConfig` in one step. Resource amounts are already `Resource` vectors in
core units (vcore in millicores, memory in bytes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.resources import Resource

ROOT = "root"
DEFAULT_PARTITION = "default"

# Queue properties the scheduler reads (others are kept and shown, not interpreted).
APPLICATION_SORT_POLICY = "application.sort.policy"  # fifo (default) | fair; stateaware -> fifo
APPLICATION_SORT_PRIORITY = "application.sort.priority"  # enabled (default) | disabled
PREEMPTION_POLICY = "preemption.policy"  # default | fence | disabled
PREEMPTION_DELAY = "preemption.delay"  # duration an ask waits before it may preempt (default 30s)
PRIORITY_OFFSET = "priority.offset"  # int32 added to the priorities of pods in or below the queue
PRIORITY_POLICY = "priority.policy"  # default | fence


@dataclass(frozen=True, slots=True)
class Limit:
    """One entry of a queue's (or the partition's) `limits` list."""

    limit: str = ""
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    max_resources: Resource | None = None
    max_applications: int = 0  # 0: not limited


@dataclass(frozen=True, slots=True)
class ChildTemplate:
    """Settings given to dynamic children created under a parent queue."""

    max_applications: int = 0
    properties: Mapping[str, str] = field(default_factory=dict)
    guaranteed: Resource | None = None
    max: Resource | None = None


@dataclass(frozen=True, slots=True)
class QueueConfig:
    name: str
    parent: bool | None = None  # the `parent` key; None: not stated
    guaranteed: Resource | None = None
    max: Resource | None = None
    max_applications: int = 0  # 0: not limited
    properties: Mapping[str, str] = field(default_factory=dict)
    submit_acl: str | None = None
    admin_acl: str | None = None
    limits: tuple[Limit, ...] = ()
    child_template: ChildTemplate | None = None
    queues: tuple[QueueConfig, ...] = ()

    @property
    def is_parent(self) -> bool:
        return bool(self.parent) or bool(self.queues)

    @property
    def may_become_parent(self) -> bool:
        """A leaf only by default (no children, no `parent` key): a placement rule's parent rule
        that names it makes it a parent while it holds no applications (seed 004's example)."""
        return self.parent is None and not self.queues


@dataclass(frozen=True, slots=True)
class FilterConfig:
    type: str = "allow"  # allow | deny
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PlacementRuleConfig:
    name: str  # provided | tag | user | fixed
    create: bool = False
    parent: PlacementRuleConfig | None = None
    filter: FilterConfig | None = None
    value: str = ""


@dataclass(frozen=True, slots=True)
class NodeSortPolicyConfig:
    type: str = "binpacking"  # binpacking | fair
    resource_weights: Mapping[str, float] = field(default_factory=dict)  # empty: vcore 1, memory 1


@dataclass(frozen=True, slots=True)
class PartitionConfig:
    name: str = DEFAULT_PARTITION
    queues: tuple[QueueConfig, ...] = ()  # exactly one: root
    placement_rules: tuple[PlacementRuleConfig, ...] = ()
    node_sort_policy: NodeSortPolicyConfig = field(default_factory=NodeSortPolicyConfig)
    limits: tuple[Limit, ...] = ()
    preemption_enabled: bool = True

    @property
    def root(self) -> QueueConfig:
        return self.queues[0]


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    partitions: tuple[PartitionConfig, ...]
    warnings: tuple[str, ...] = ()  # things accepted but worth telling (cpu read as vcore, ...)
    checksum: str = ""  # sha256 of the source text, as YuniKorn keeps it
    source: str = ""  # the YAML text it was parsed from (shown by REST /config)
    # (resource, core value) -> the text the file wrote it as, so messages use the file's units
    written: Mapping[tuple[str, int], str] = field(default_factory=dict, compare=False, repr=False)

    def partition(self, name: str = DEFAULT_PARTITION) -> PartitionConfig:
        for part in self.partitions:
            if part.name == name:
                return part
        raise KeyError(name)


def _limit_document(limit: Limit) -> dict[str, Any]:
    doc: dict[str, Any] = {"limit": limit.limit, "users": list(limit.users), "groups": list(limit.groups)}
    if limit.max_resources is not None:
        doc["maxresources"] = dict(limit.max_resources)
    doc["maxapplications"] = limit.max_applications
    return doc


def _queue_document(queue: QueueConfig) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": queue.name, "parent": queue.is_parent}
    resources: dict[str, Any] = {}
    if queue.guaranteed is not None:
        resources["guaranteed"] = dict(queue.guaranteed)
    if queue.max is not None:
        resources["max"] = dict(queue.max)
    if resources:
        doc["resources"] = resources
    doc["maxapplications"] = queue.max_applications
    doc["properties"] = dict(queue.properties)
    if queue.submit_acl is not None:
        doc["submitacl"] = queue.submit_acl
    if queue.admin_acl is not None:
        doc["adminacl"] = queue.admin_acl
    if queue.limits:
        doc["limits"] = [_limit_document(limit) for limit in queue.limits]
    if queue.child_template is not None:
        tpl = queue.child_template
        tpl_res: dict[str, Any] = {}
        if tpl.guaranteed is not None:
            tpl_res["guaranteed"] = dict(tpl.guaranteed)
        if tpl.max is not None:
            tpl_res["max"] = dict(tpl.max)
        doc["childtemplate"] = {
            "maxapplications": tpl.max_applications,
            "properties": dict(tpl.properties),
            "resources": tpl_res,
        }
    if queue.queues:
        doc["queues"] = [_queue_document(child) for child in queue.queues]
    return doc


def _rule_document(rule: PlacementRuleConfig) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": rule.name, "create": rule.create}
    if rule.value:
        doc["value"] = rule.value
    if rule.filter is not None:
        doc["filter"] = {
            "type": rule.filter.type,
            "users": list(rule.filter.users),
            "groups": list(rule.filter.groups),
        }
    if rule.parent is not None:
        doc["parent"] = _rule_document(rule.parent)
    return doc


def config_document(cfg: SchedulerConfig) -> dict[str, Any]:
    """A JSON-able view with YuniKorn's key names and resources as {name: int}, for REST /ws/v1/config."""
    return {
        "partitions": [
            {
                "name": part.name,
                "queues": [_queue_document(queue) for queue in part.queues],
                "placementrules": [_rule_document(rule) for rule in part.placement_rules],
                "nodesortpolicy": {
                    "type": part.node_sort_policy.type,
                    "resourceweights": dict(part.node_sort_policy.resource_weights),
                },
                "limits": [_limit_document(limit) for limit in part.limits],
                "preemption": {"enabled": part.preemption_enabled},
            }
            for part in cfg.partitions
        ],
        "checksum": cfg.checksum,
        "warnings": list(cfg.warnings),
    }
