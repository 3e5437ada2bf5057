"""Strict parsing of YuniKorn's queues.yaml into `SchedulerConfig`: every unknown key or wrong type
is reported with its path, all problems at once."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import yaml

from core.config.defaults import default_config
from core.config.errors import ConfigError
from core.config.safe_yaml import YAMLLimitError, check_nesting, load_yaml
from core.config.schema import (
    APPLICATION_SORT_POLICY,
    APPLICATION_SORT_PRIORITY,
    DEFAULT_PARTITION,
    PREEMPTION_DELAY,
    PREEMPTION_POLICY,
    PRIORITY_OFFSET,
    PRIORITY_POLICY,
    ROOT,
    ChildTemplate,
    FilterConfig,
    Limit,
    NodeSortPolicyConfig,
    PartitionConfig,
    PlacementRuleConfig,
    QueueConfig,
    SchedulerConfig,
)
from core.config.units import old_unit_warnings
from core.resources import QuantityError, Resource, resource_from_config

_TOP_KEYS = frozenset({"partitions", "checksum"})
_PARTITION_KEYS = frozenset({"name", "queues", "placementrules", "nodesortpolicy", "limits", "preemption"})
_QUEUE_KEYS = frozenset(
    {
        "name",
        "parent",
        "resources",
        "maxapplications",
        "properties",
        "submitacl",
        "adminacl",
        "limits",
        "childtemplate",
        "queues",
    }
)
_RESOURCES_KEYS = frozenset({"guaranteed", "max"})
_RULE_KEYS = frozenset({"name", "create", "parent", "filter", "value"})
_FILTER_KEYS = frozenset({"type", "users", "groups"})
_NODESORT_KEYS = frozenset({"type", "resourceweights"})
_LIMIT_KEYS = frozenset({"limit", "users", "groups", "maxresources", "maxapplications"})
UNSCHEDULABLE_BACKOFF = "application.unschedasks.backoff"  # YuniKorn 1.8 (and its .delay)
_TEMPLATE_KEYS = frozenset({"maxapplications", "properties", "resources"})
_PREEMPTION_KEYS = frozenset({"enabled"})
READ_PROPERTIES = frozenset(
    {
        APPLICATION_SORT_POLICY,
        APPLICATION_SORT_PRIORITY,
        PREEMPTION_POLICY,
        PREEMPTION_DELAY,
        PRIORITY_OFFSET,
        PRIORITY_POLICY,
    }
)


class _Reader:
    """Collects problems and warnings while reading one document."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.warnings: list[str] = []

    def mapping(self, value: object, path: str, keys: frozenset[str]) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.problems.append(f"{path}: expected a mapping, got {type(value).__name__}")
            return {}
        for key in value:
            if key not in keys:
                self.problems.append(f"{path}: unknown key {key!r}")
        return value

    def seq(self, value: object, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.problems.append(f"{path}: expected a list, got {type(value).__name__}")
            return []
        return value

    def string(self, value: object, path: str, default: str = "") -> str:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.problems.append(f"{path}: expected a string, got {type(value).__name__}")
            return default
        return str(value)

    def boolean(self, value: object, path: str) -> bool:
        if value is None:
            return False
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        self.problems.append(f"{path}: expected true or false, got {value!r}")
        return False

    def count(self, value: object, path: str) -> int:
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, int):
            self.problems.append(f"{path}: expected a whole number, got {value!r}")
            return 0
        if value < 0:
            self.problems.append(f"{path}: must not be negative, got {value}")
            return 0
        return value

    def names(self, value: object, path: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return tuple(self.string(item, f"{path}[{i}]") for i, item in enumerate(self.seq(value, path)))

    def strings(self, value: object, path: str) -> dict[str, str]:
        out: dict[str, str] = {}
        if value is None:
            return out
        if not isinstance(value, Mapping):
            self.problems.append(f"{path}: expected a mapping, got {type(value).__name__}")
            return out
        for key, item in value.items():
            out[str(key)] = self.string(item, f"{path}.{key}")
        return out

    def properties(self, value: object, path: str) -> dict[str, str]:
        """Queue properties, with a warning for each value read differently and each key not read."""
        props = self.strings(value, path)
        for key, text in props.items():
            if key.startswith(UNSCHEDULABLE_BACKOFF):
                continue  # said below, with what Herder does instead
            if key not in READ_PROPERTIES:
                self.warnings.append(
                    f"{path}.{key}: property kept and shown in the configuration, but Herder does not read it "
                    f"(it reads {', '.join(sorted(READ_PROPERTIES))})"
                )
            elif key == APPLICATION_SORT_POLICY and text.lower() == "stateaware":
                self.warnings.append(
                    f"{path}.{key}: 'stateaware' is deprecated (YuniKorn 1.5 removed it) and is read as 'fifo'"
                )
        return props

    def resource(self, value: object, path: str) -> Resource | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.problems.append(f"{path}: expected a mapping, got {type(value).__name__}")
            return None
        try:
            res, warnings = resource_from_config(value, path)
        except (QuantityError, TypeError, ValueError) as err:
            self.problems.append(str(err) if str(err).startswith(path) else f"{path}: {err}")
            return None
        self.warnings.extend(warnings)
        self.warnings.extend(old_unit_warnings(value, path))
        return res


def parse_config(source: str | Mapping[str, Any] | None) -> SchedulerConfig:
    """Read queues.yaml text (or its already-loaded mapping); raises ConfigError listing every problem."""
    if source is None or (isinstance(source, str) and not source.strip()):
        return default_config()
    if isinstance(source, str):
        text = source
        try:
            data: object = load_yaml(text)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            raise ConfigError([f"invalid YAML{where}: {getattr(err, 'problem', None) or err}"]) from None
    elif isinstance(source, Mapping):
        data = source
        try:
            check_nesting(source)
        except YAMLLimitError as err:
            raise ConfigError([f"config: {err.problem}"]) from None
        try:
            text = yaml.safe_dump(dict(source), sort_keys=False)
        except yaml.YAMLError as err:
            raise ConfigError([f"config cannot be written as YAML: {err}"]) from None
    else:
        raise ConfigError([f"config: expected queues.yaml text or a mapping, got {type(source).__name__}"])
    if data is None:
        return default_config()
    reader = _Reader()
    top = reader.mapping(data, "config", _TOP_KEYS)
    raw_partitions = reader.seq(top.get("partitions"), "partitions")
    if not raw_partitions and not reader.problems:
        reader.problems.append("partitions: at least one partition is required")
    partitions = tuple(_partition(reader, raw, i) for i, raw in enumerate(raw_partitions))
    if reader.problems:
        raise ConfigError(reader.problems)
    return SchedulerConfig(
        partitions=partitions,
        warnings=tuple(reader.warnings),
        checksum=hashlib.sha256(text.encode()).hexdigest(),
        source=text,
    )


def _partition(reader: _Reader, raw: object, index: int) -> PartitionConfig:
    name_guess = raw.get("name") if isinstance(raw, Mapping) else None
    label = name_guess if isinstance(name_guess, str) and name_guess else DEFAULT_PARTITION
    path = f"partitions[{label}]"
    data = reader.mapping(raw, path, _PARTITION_KEYS)
    name = reader.string(data.get("name"), f"{path}.name", DEFAULT_PARTITION) or DEFAULT_PARTITION
    raw_queues = reader.seq(data.get("queues"), f"{path}.queues")
    single_root = len(raw_queues) == 1 and isinstance(raw_queues[0], Mapping)
    single_root = single_root and str(raw_queues[0].get("name", "")).lower() == ROOT
    # Queues given without a single root sit under the inserted root, and their paths say so.
    queues_path = f"{path}.queues" if single_root else f"{path}.queues.{ROOT}"
    queues = tuple(_queue(reader, q, queues_path, i) for i, q in enumerate(raw_queues))
    limits = _limits(reader, data.get("limits"), f"{path}.limits")
    if len(queues) != 1 or queues[0].name.lower() != ROOT:
        queues = (QueueConfig(name=ROOT, parent=True, queues=queues),)
    root = queues[0]
    if limits and not root.limits:
        root = _replace_limits(root, limits)
        queues = (root,)
    rules = tuple(
        _rule(reader, r, f"{path}.placementrules[{i}]")
        for i, r in enumerate(reader.seq(data.get("placementrules"), f"{path}.placementrules"))
    )
    sort = reader.mapping(data.get("nodesortpolicy"), f"{path}.nodesortpolicy", _NODESORT_KEYS)
    weights: dict[str, float] = {}
    raw_weights = sort.get("resourceweights")
    if raw_weights is not None:
        if not isinstance(raw_weights, Mapping):
            reader.problems.append(f"{path}.nodesortpolicy.resourceweights: expected a mapping")
        else:
            for key, weight in raw_weights.items():
                if isinstance(weight, bool) or not isinstance(weight, (int, float)):
                    reader.problems.append(
                        f"{path}.nodesortpolicy.resourceweights.{key}: expected a number, got {weight!r}"
                    )
                else:
                    weights[str(key)] = float(weight)
    policy = NodeSortPolicyConfig(
        type=reader.string(sort.get("type"), f"{path}.nodesortpolicy.type", "binpacking") or "binpacking",
        resource_weights=weights,
    )
    preemption = reader.mapping(data.get("preemption"), f"{path}.preemption", _PREEMPTION_KEYS)
    enabled = preemption.get("enabled")
    return PartitionConfig(
        name=name,
        queues=queues,
        placement_rules=rules,
        node_sort_policy=policy,
        limits=limits,
        preemption_enabled=True if enabled is None else reader.boolean(enabled, f"{path}.preemption.enabled"),
    )


def _replace_limits(queue: QueueConfig, limits: tuple[Limit, ...]) -> QueueConfig:
    from dataclasses import replace

    return replace(queue, limits=limits)


MAX_QUEUE_DEPTH = 40  # levels below root; deeper trees are refused, not walked


def _queue(reader: _Reader, raw: object, parent_path: str, index: int, depth: int = 0) -> QueueConfig:
    name_guess = raw.get("name") if isinstance(raw, Mapping) else None
    label = name_guess if isinstance(name_guess, str) and name_guess else f"[{index}]"
    path = f"{parent_path}.{label}"
    data = reader.mapping(raw, path, _QUEUE_KEYS)
    name = reader.string(data.get("name"), f"{path}.name")
    if not name:
        reader.problems.append(f"{path}: queue has no name")
    resources = reader.mapping(data.get("resources"), f"{path}.resources", _RESOURCES_KEYS)
    template = None
    if data.get("childtemplate") is not None:
        tpl = reader.mapping(data.get("childtemplate"), f"{path}.childtemplate", _TEMPLATE_KEYS)
        tres = reader.mapping(tpl.get("resources"), f"{path}.childtemplate.resources", _RESOURCES_KEYS)
        template = ChildTemplate(
            max_applications=reader.count(tpl.get("maxapplications"), f"{path}.childtemplate.maxapplications"),
            properties=reader.properties(tpl.get("properties"), f"{path}.childtemplate.properties"),
            guaranteed=reader.resource(tres.get("guaranteed"), f"{path}.childtemplate.resources.guaranteed"),
            max=reader.resource(tres.get("max"), f"{path}.childtemplate.resources.max"),
        )
    raw_children = reader.seq(data.get("queues"), f"{path}.queues")
    if raw_children and depth >= MAX_QUEUE_DEPTH:
        reader.problems.append(f"{path}: queues nested deeper than {MAX_QUEUE_DEPTH} levels")
        raw_children = []
    children = tuple(_queue(reader, q, path, i, depth + 1) for i, q in enumerate(raw_children))
    properties = reader.properties(data.get("properties"), f"{path}.properties")
    for key in sorted(k for k in properties if k.startswith(UNSCHEDULABLE_BACKOFF)):
        reader.warnings.append(
            f"{path}.properties.{key}: ignored; Herder already retries a pod that cannot run only"
            " once something changed that may let it run"
        )
    submit = data.get("submitacl")
    admin = data.get("adminacl")
    return QueueConfig(
        name=name,
        parent=None if data.get("parent") is None else reader.boolean(data.get("parent"), f"{path}.parent"),
        guaranteed=reader.resource(resources.get("guaranteed"), f"{path}.resources.guaranteed"),
        max=reader.resource(resources.get("max"), f"{path}.resources.max"),
        max_applications=reader.count(data.get("maxapplications"), f"{path}.maxapplications"),
        properties=properties,
        submit_acl=None if submit is None else reader.string(submit, f"{path}.submitacl"),
        admin_acl=None if admin is None else reader.string(admin, f"{path}.adminacl"),
        limits=_limits(reader, data.get("limits"), f"{path}.limits"),
        child_template=template,
        queues=children,
    )


def _limits(reader: _Reader, raw: object, path: str) -> tuple[Limit, ...]:
    out: list[Limit] = []
    for i, item in enumerate(reader.seq(raw, path)):
        where = f"{path}[{i}]"
        data = reader.mapping(item, where, _LIMIT_KEYS)
        out.append(
            Limit(
                limit=reader.string(data.get("limit"), f"{where}.limit"),
                users=reader.names(data.get("users"), f"{where}.users"),
                groups=reader.names(data.get("groups"), f"{where}.groups"),
                max_resources=reader.resource(data.get("maxresources"), f"{where}.maxresources"),
                max_applications=reader.count(data.get("maxapplications"), f"{where}.maxapplications"),
            )
        )
    return tuple(out)


def _rule(reader: _Reader, raw: object, path: str) -> PlacementRuleConfig:
    data = reader.mapping(raw, path, _RULE_KEYS)
    flt = None
    if data.get("filter") is not None:
        fdata = reader.mapping(data.get("filter"), f"{path}.filter", _FILTER_KEYS)
        flt = FilterConfig(
            type=reader.string(fdata.get("type"), f"{path}.filter.type", "allow"),
            users=reader.names(fdata.get("users"), f"{path}.filter.users"),
            groups=reader.names(fdata.get("groups"), f"{path}.filter.groups"),
        )
    parent = None
    raw_parent = data.get("parent")
    if isinstance(raw_parent, list) and len(raw_parent) == 1:
        raw_parent = raw_parent[0]  # YuniKorn's documentation (seed 004) writes the parent rule as a one-item list
    if raw_parent is not None:
        parent = _rule(reader, raw_parent, f"{path}.parent")
    return PlacementRuleConfig(
        name=reader.string(data.get("name"), f"{path}.name"),
        create=reader.boolean(data.get("create"), f"{path}.create"),
        parent=parent,
        filter=flt,
        value=reader.string(data.get("value"), f"{path}.value"),
    )
