"""Strict parsing of YuniKorn's queues.yaml into `SchedulerConfig`: every unknown key, wrong type
and repeated key is reported with its path (or line), all problems at once.

Keys are YuniKorn's (its reader refuses unknown ones, as Herder does); a key YuniKorn knows
but Herder does not use (`usergroupresolver`, `preemption.quotapreemptionenabled`) is accepted
with a warning. Names YuniKorn compares without regard to case are stored lower-cased: rule
names, filter types, tag names, and the partition name `default`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import yaml

from core.config.defaults import default_config
from core.config.errors import ConfigError
from core.config.reader import DocumentReader
from core.config.safe_yaml import DuplicateKey, YAMLLimitError, check_nesting, load_yaml
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

_TOP_KEYS = frozenset({"partitions", "checksum"})
_PARTITION_KEYS = frozenset(
    {"name", "queues", "placementrules", "nodesortpolicy", "limits", "preemption", "usergroupresolver"}
)
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
_PREEMPTION_KEYS = frozenset({"enabled", "quotapreemptionenabled"})
_RESOLVER_KEYS = frozenset({"type"})
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
# Values (keys, scalars, collections; an alias counts what it repeats) a queues.yaml may hold: the
# largest real configurations, thousands of queues written out in block style, stay below it within
# a ConfigMap's 1 MiB, and checking the largest one it admits stays near a second (docs/performance.md).
MAX_CONFIG_VALUES = 100_000
# Properties YuniKorn reads that Herder does not (no guess is offered for these).
YUNIKORN_PROPERTIES = frozenset({"quota.preemption.delay", UNSCHEDULABLE_BACKOFF, f"{UNSCHEDULABLE_BACKOFF}.delay"})


def _properties(reader: DocumentReader, value: object, path: str) -> dict[str, str]:
    """Queue properties, with a warning for each value read differently and each key not read."""
    props = reader.strings(value, path)
    for key, text in props.items():
        if key.startswith(UNSCHEDULABLE_BACKOFF):
            continue  # said below, with what Herder does instead
        if key not in READ_PROPERTIES:
            known = READ_PROPERTIES | YUNIKORN_PROPERTIES
            guess = "" if key in YUNIKORN_PROPERTIES else reader.guesser.did_you_mean(key, known)
            reader.warnings.append(
                f"{path}.{key}: property kept and shown in the configuration, but Herder does not read it{guess} "
                f"(it reads {', '.join(sorted(READ_PROPERTIES))})"
            )
        elif key == APPLICATION_SORT_POLICY and text.lower() == "stateaware":
            reader.warnings.append(
                f"{path}.{key}: 'stateaware' is deprecated (YuniKorn 1.5 removed it) and is read as 'fifo'"
            )
    return props


@dataclass(frozen=True, slots=True)
class ReadConfig:
    """What reading a document found: the configuration as far as it could be read (None when
    the text is not YAML), every problem, every warning, and the paths whose values were
    unreadable (so whole-configuration checks can leave them out)."""

    config: SchedulerConfig | None
    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    unreadable: frozenset[str] = frozenset()


def read_config(source: str | Mapping[str, Any] | None) -> ReadConfig:
    """Read queues.yaml text (or its already-loaded mapping) without stopping at a problem."""
    if source is None or (isinstance(source, str) and not source.strip()):
        return ReadConfig(default_config())
    duplicates: list[DuplicateKey] = []
    if isinstance(source, str):
        text = source
        try:
            data: object = load_yaml(text, max_nodes=MAX_CONFIG_VALUES, duplicate_keys=duplicates)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
            problem = getattr(err, "problem", None) or err
            if isinstance(err, YAMLLimitError):
                return ReadConfig(None, (f"too large to check{where}: {problem}",))
            return ReadConfig(None, (f"invalid YAML{where}: {problem}",))
    elif isinstance(source, Mapping):
        data = source
        try:
            check_nesting(source)
        except YAMLLimitError as err:
            return ReadConfig(None, (f"config: {err.problem}",))
        try:
            text = yaml.safe_dump(dict(source), sort_keys=False)
        except yaml.YAMLError as err:
            return ReadConfig(None, (f"config cannot be written as YAML: {err}",))
    else:
        return ReadConfig(None, (f"config: expected queues.yaml text or a mapping, got {type(source).__name__}",))
    if data is None:
        return ReadConfig(default_config(), tuple(str(d) for d in duplicates))
    reader = DocumentReader()
    reader.problems.extend(str(d) for d in duplicates)
    top = reader.mapping(data, "config", _TOP_KEYS)
    raw_partitions = reader.seq(top.get("partitions"), "partitions")
    if not raw_partitions and not reader.problems:
        reader.problems.append("partitions: at least one partition is required")
    partitions = tuple(_partition(reader, raw, i) for i, raw in enumerate(raw_partitions))
    config = SchedulerConfig(
        partitions=partitions,
        checksum=hashlib.sha256(text.encode()).hexdigest(),
        source=text,
        written=dict(reader.written),
    )
    warnings = [*reader.warnings, *reader.resource_name_warnings()]
    return ReadConfig(config, tuple(reader.problems), tuple(warnings), frozenset(reader.unreadable))


def parse_config(source: str | Mapping[str, Any] | None) -> SchedulerConfig:
    """Read queues.yaml text (or its already-loaded mapping); raises ConfigError listing every
    problem reading found (whole-configuration checks are `validate_config`'s)."""
    read = read_config(source)
    if read.problems or read.config is None:
        raise ConfigError(list(read.problems), list(read.warnings))
    return replace(read.config, warnings=read.warnings)


def _partition_name(raw: object) -> str:
    """`default` for an empty name or any spelling of it (YuniKorn compares it without case)."""
    if isinstance(raw, str) and raw and raw.lower() != DEFAULT_PARTITION:
        return raw
    return DEFAULT_PARTITION


def _partition(reader: DocumentReader, raw: object, index: int) -> PartitionConfig:
    name_guess = raw.get("name") if isinstance(raw, Mapping) else None
    path = f"partitions[{_partition_name(name_guess)}]"
    data = reader.mapping(raw, path, _PARTITION_KEYS)
    name = _partition_name(reader.string(data.get("name"), f"{path}.name", DEFAULT_PARTITION))
    if isinstance(data, Mapping) and data.get("queues") is None and f"{path}" not in reader.unreadable:
        reader.problems.append(f"{path}: queues is required (at least the root queue: queues: [{{name: root}}])")
    raw_queues = reader.seq(data.get("queues"), f"{path}.queues")
    single_root = len(raw_queues) == 1 and isinstance(raw_queues[0], Mapping)
    single_root = single_root and str(raw_queues[0].get("name", "")).lower() == ROOT
    if single_root and raw_queues[0].get("name") != ROOT:
        raw_queues = [{**raw_queues[0], "name": ROOT}]  # `Root` is the root, and is called root
    # Queues given without a single root sit under the inserted root, and their paths say so.
    queues_path = f"{path}.queues" if single_root else f"{path}.queues.{ROOT}"
    queues = tuple(_queue(reader, q, queues_path, i) for i, q in enumerate(raw_queues))
    limits = _limits(reader, data.get("limits"), f"{path}.limits")
    root = replace(queues[0], parent=True) if single_root else QueueConfig(name=ROOT, parent=True, queues=queues)
    queues = (root,)
    if limits and not root.limits:
        root = replace(root, limits=limits)
        queues = (root,)
    rules = tuple(
        _rule(reader, r, f"{path}.placementrules[{i}]")
        for i, r in enumerate(reader.seq(data.get("placementrules"), f"{path}.placementrules"))
    )
    raw_sort = data.get("nodesortpolicy")
    if isinstance(raw_sort, str):
        reader.bad(
            f"{path}.nodesortpolicy",
            f"expected a mapping, got str (write 'nodesortpolicy: {{type: {raw_sort}}}')",
        )
        raw_sort = None
    sort = reader.mapping(raw_sort, f"{path}.nodesortpolicy", _NODESORT_KEYS)
    weights: dict[str, float] = {}
    raw_weights = sort.get("resourceweights")
    if raw_weights is not None:
        if not isinstance(raw_weights, Mapping):
            reader.bad(f"{path}.nodesortpolicy.resourceweights", "expected a mapping")
        else:
            for key, weight in raw_weights.items():
                if isinstance(weight, bool) or not isinstance(weight, (int, float)):
                    reader.bad(f"{path}.nodesortpolicy.resourceweights.{key}", f"expected a number, got {weight!r}")
                else:
                    weights[str(key)] = float(weight)
    policy = NodeSortPolicyConfig(
        type=reader.string(sort.get("type"), f"{path}.nodesortpolicy.type", "binpacking") or "binpacking",
        resource_weights=weights,
    )
    preemption = reader.mapping(data.get("preemption"), f"{path}.preemption", _PREEMPTION_KEYS)
    enabled = preemption.get("enabled")
    if reader.boolean(preemption.get("quotapreemptionenabled"), f"{path}.preemption.quotapreemptionenabled"):
        reader.warnings.append(
            f"{path}.preemption.quotapreemptionenabled: ignored; Herder has no quota-change preemption (a queue "
            "whose max drops below its usage keeps its pods until they end)"
        )
    resolver = reader.mapping(data.get("usergroupresolver"), f"{path}.usergroupresolver", _RESOLVER_KEYS)
    if reader.string(resolver.get("type"), f"{path}.usergroupresolver.type"):
        reader.warnings.append(
            f"{path}.usergroupresolver: ignored; Herder takes a pod's user and groups from the "
            "yunikorn.apache.org/user.info annotation its webhook sets"
        )
    return PartitionConfig(
        name=name,
        queues=queues,
        placement_rules=rules,
        node_sort_policy=policy,
        limits=limits,
        preemption_enabled=True if enabled is None else reader.boolean(enabled, f"{path}.preemption.enabled"),
    )


MAX_QUEUE_DEPTH = 40  # levels below root; deeper trees are refused, not walked


def _queue(reader: DocumentReader, raw: object, parent_path: str, index: int, depth: int = 0) -> QueueConfig:
    name_guess = raw.get("name") if isinstance(raw, Mapping) else None
    readable = isinstance(name_guess, (str, int, float)) and not isinstance(name_guess, bool)
    label = str(name_guess) if readable and str(name_guess) else f"[{index}]"
    path = f"{parent_path}.{label}"
    data = reader.mapping(raw, path, _QUEUE_KEYS)
    name = reader.string(data.get("name"), f"{path}.name")
    if not name:
        reader.problems.append(f"{path}: queue has no name")
        reader.unreadable.add(f"{path}.name")
        name = label  # the queue keeps the place its path names; its name is never checked
    resources = reader.mapping(data.get("resources"), f"{path}.resources", _RESOURCES_KEYS)
    template = None
    if data.get("childtemplate") is not None:
        tpl = reader.mapping(data.get("childtemplate"), f"{path}.childtemplate", _TEMPLATE_KEYS)
        tres = reader.mapping(tpl.get("resources"), f"{path}.childtemplate.resources", _RESOURCES_KEYS)
        template = ChildTemplate(
            max_applications=reader.count(tpl.get("maxapplications"), f"{path}.childtemplate.maxapplications"),
            properties=_properties(reader, tpl.get("properties"), f"{path}.childtemplate.properties"),
            guaranteed=reader.resource(tres.get("guaranteed"), f"{path}.childtemplate.resources.guaranteed"),
            max=reader.resource(tres.get("max"), f"{path}.childtemplate.resources.max"),
        )
    raw_children = reader.seq(data.get("queues"), f"{path}.queues")
    if raw_children and depth >= MAX_QUEUE_DEPTH:
        reader.problems.append(f"{path}: queues nested deeper than {MAX_QUEUE_DEPTH} levels")
        raw_children = []
    children = tuple(_queue(reader, q, path, i, depth + 1) for i, q in enumerate(raw_children))
    properties = _properties(reader, data.get("properties"), f"{path}.properties")
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


def _limits(reader: DocumentReader, raw: object, path: str) -> tuple[Limit, ...]:
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


def _rule(reader: DocumentReader, raw: object, path: str) -> PlacementRuleConfig:
    data = reader.mapping(raw, path, _RULE_KEYS)
    flt = None
    if data.get("filter") is not None:
        fdata = reader.mapping(data.get("filter"), f"{path}.filter", _FILTER_KEYS)
        flt = FilterConfig(
            type=reader.string(fdata.get("type"), f"{path}.filter.type", "allow").lower() or "allow",
            users=reader.names(fdata.get("users"), f"{path}.filter.users"),
            groups=reader.names(fdata.get("groups"), f"{path}.filter.groups"),
        )
    parent = None
    raw_parent = data.get("parent")
    if isinstance(raw_parent, list) and len(raw_parent) == 1:
        raw_parent = raw_parent[0]  # YuniKorn's documentation (seed 004) writes the parent rule as a one-item list
    if raw_parent is not None:
        parent = _rule(reader, raw_parent, f"{path}.parent")
    name = reader.string(data.get("name"), f"{path}.name").lower()
    value = reader.string(data.get("value"), f"{path}.value")
    return PlacementRuleConfig(
        name=name,
        create=reader.boolean(data.get("create"), f"{path}.create"),
        parent=parent,
        filter=flt,
        value=value.lower() if name == "tag" else value,
    )
