"""A simulation scenario: the YAML document `herder simulate` runs, read strictly.

The format is public (DESIGN "The simulation contract"): settings, queues config, nodes,
namespaces, ElasticQuotas, a workload of pods with arrival times and durations, events during
the run, `until` and `snapshots`. Reading it checks the *shape* only and reports every problem
at once, each naming the entry and the key (`workload[2].count: must be a whole number from 1 to 100000`).
What is inside the Kubernetes objects (quantities, annotations, labels) is left to the same
conversion code the operator uses, at run time, so a bad quantity in a pod behaves in the
simulator as it would in a cluster: the pod stays pending with a reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from core.config import ConfigError, SchedulerConfig, Settings, SettingsError, load_config, parse_settings
from core.config.safe_yaml import load_yaml
from shim.command import read_user_text
from shim.sim.node_groups import NodeGroup, parse_node_groups
from shim.sim.object_shapes import pod_volume_problems, shape_problems
from shim.sim.trace import TraceError, load_trace, trace_pod, trace_shape

TOP_KEYS = (
    "name",
    "settings",
    "config",
    "nodes",
    "namespaces",
    "quotas",
    "priorityclasses",
    "objects",
    "workload",
    "trace",
    "events",
    "until",
    "snapshots",
    "nodeGroups",
)
NODE_KEYS = ("name", "count", "allocatable", "labels", "annotations", "taints", "unschedulable", "ready")
WORKLOAD_KEYS = ("at", "count", "every", "duration", "created", "started", "pod")
TRACE_KEYS = ("file", "at")
ACTIONS = ("remove-node", "add-node", "cordon-node", "uncordon-node", "apply", "delete", "resize")
EVENT_KEYS = {
    "remove-node": ("name",),
    "cordon-node": ("name",),
    "uncordon-node": ("name",),
    "add-node": ("node",),
    "apply": ("object", "duration"),
    "delete": ("kind", "namespace", "name", "selector"),
    "resize": ("namespace", "name", "requests"),
}
# Other Kubernetes objects the simulator takes as applied (`objects:`, `apply`, `delete`).
OBJECT_KINDS = (
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PriorityClass",
    "PodDisruptionBudget",
    "PodGroup",  # scheduler-plugins', Volcano's or Kubernetes', told apart by apiVersion
    "Workload",
)
KINDS = ("Pod", "ElasticQuota", "Namespace", "Node", *OBJECT_KINDS)
DEFAULT_NAMESPACE = "default"
MAX_SCENARIO_BYTES = 16 * 1024 * 1024
# A comparison with NaN is always false, so bounds are written as ranges NaN is outside of.
MAX_SECONDS = 10 * 365 * 24 * 3600.0  # ten years of simulated time
MAX_COUNT = 100_000  # copies of one node or workload entry
MAX_POD_COUNT = 1_000_000  # pods of the whole workload


class ScenarioError(ValueError):
    """The scenario cannot run; `problems` names each entry and key that is wrong."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True, slots=True)
class NodeEntry:
    """A node as the scenario writes it; `count` > 1 makes `<name>-0` .. `<name>-(count-1)`."""

    name: str
    allocatable: Mapping[str, Any]
    count: int = 1
    labels: Mapping[str, Any] = field(default_factory=dict)
    annotations: Mapping[str, Any] = field(default_factory=dict)
    taints: Sequence[Any] = ()
    unschedulable: bool = False
    ready: bool = True


@dataclass(frozen=True, slots=True)
class WorkloadEntry:
    """Pods arriving at `at`. `created` (its creationTimestamp, default `at`) and, for a pod
    created bound, `started` (its status.startTime) may lie before the run's start: a snapshot's
    pods were created and started before the moment it was taken."""

    index: int
    at: float
    pod: Mapping[str, Any]
    count: int = 1
    duration: float | None = None
    created: float | None = None
    started: float | None = None
    origin: str = ""  # where a trace's row came from (`week.csv:12`); scenario entries: workload[index]
    every: float | None = None  # copies arrive one by one, this many seconds apart
    shape: tuple[object, ...] | None = None  # trace rows with one shape make the same pod but for name and application

    @property
    def where(self) -> str:
        return self.origin or f"workload[{self.index}]"

    def arrival(self, index: int) -> float:
        """When copy `index` arrives."""
        return self.at + index * self.every if self.every else self.at


@dataclass(frozen=True, slots=True)
class ScenarioEvent:
    """One change during the run; which fields are set depends on `action`."""

    index: int
    at: float
    action: str
    name: str | None = None
    node: NodeEntry | None = None
    obj: Mapping[str, Any] | None = None
    duration: float | None = None
    kind: str | None = None
    namespace: str | None = None
    selector: Mapping[str, str] | None = None
    requests: Mapping[str, Any] | None = None  # resize: the pod's new total per resource named


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    settings: Settings
    config: SchedulerConfig
    nodes: tuple[NodeEntry, ...] = ()
    namespaces: tuple[Mapping[str, Any], ...] = ()
    quotas: tuple[Mapping[str, Any], ...] = ()
    priority_classes: tuple[Mapping[str, Any], ...] = ()
    objects: tuple[Mapping[str, Any], ...] = ()  # OBJECT_KINDS, and kinds Herder does not use
    workload: tuple[WorkloadEntry, ...] = ()
    events: tuple[ScenarioEvent, ...] = ()
    until: float | None = None
    snapshots: tuple[float, ...] = ()
    node_groups: tuple[NodeGroup, ...] = ()  # what a simulated cluster-autoscaler may add (node_groups.py)


def object_kind(obj: Mapping[str, Any]) -> str | None:
    """Pod, ElasticQuota or Namespace: from `kind`, else from the object's shape."""
    kind = obj.get("kind")
    if isinstance(kind, str):
        return kind if kind in ("Pod", "ElasticQuota", "Namespace", *OBJECT_KINDS) else None
    spec = obj.get("spec")
    if isinstance(spec, Mapping):
        if "containers" in spec:
            return "Pod"
        if "min" in spec or "max" in spec:
            return "ElasticQuota"
        return None
    return "Namespace" if isinstance(obj.get("metadata"), Mapping) else None


class _Reader:
    """Collects every problem with the path it was found at."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def bad(self, where: str, message: str) -> None:
        self.problems.append(f"{where}: {message}")

    def mapping(self, value: object, where: str, keys: Sequence[str] | None = None) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.bad(where, f"expected a mapping, got {_kind(value)}")
            return {}
        if keys is not None:
            for key in value:
                if key not in keys:
                    self.bad(where, f"unknown key {key!r} (expected one of: {', '.join(keys)})")
        return value

    def seq(self, value: object, where: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.bad(where, f"expected a list, got {_kind(value)}")
            return []
        return value

    def time(self, value: object, where: str, default: float | None = None) -> float | None:
        if value is None:
            if default is None:
                self.bad(where, "required (seconds from the start)")
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_SECONDS:
            self.bad(where, f"must be a number of seconds from 0 to {MAX_SECONDS:g}, got {value!r}")
            return default
        return float(value)

    def positive_number(self, value: object, where: str) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_SECONDS:
            self.bad(where, f"must be a positive number of seconds up to {MAX_SECONDS:g}, got {value!r}")
            return None
        return float(value)

    def earlier(self, value: object, where: str, at: float) -> float | None:
        """A moment at or before `at`, possibly before the run's start (negative seconds)."""
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not -MAX_SECONDS <= value <= at:
            self.bad(where, f"must be seconds from {-MAX_SECONDS:g} to the entry's at ({at:g}), got {value!r}")
            return None
        return float(value)

    def count(self, value: object, where: str) -> int:
        if value is None:
            return 1
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
            self.bad(where, f"must be a whole number from 1 to {MAX_COUNT}, got {value!r}")
            return 1
        return value

    def text(self, value: object, where: str) -> str:
        if not isinstance(value, str) or not value:
            self.bad(where, "required: a non-empty string" if value is None else f"must be a string, got {value!r}")
            return ""
        return value

    def flag(self, value: object, where: str, default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            self.bad(where, f"must be true or false, got {value!r}")
            return default
        return value

    def labels(self, value: object, where: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for key, item in self.mapping(value, where).items():
            if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                self.bad(f"{where}.{key}", f"must be a string, got {item!r}")
                continue
            out[str(key)] = str(item)
        return out

    def metadata_name(self, obj: Mapping[str, Any], where: str) -> str:
        meta = self.mapping(obj.get("metadata"), f"{where}.metadata")
        if "metadata" not in obj:
            self.bad(f"{where}.metadata", "required (with a name)")
            return ""
        for key in ("labels", "annotations"):
            if meta.get(key) is not None and not isinstance(meta[key], Mapping):
                self.bad(f"{where}.metadata.{key}", f"expected a mapping, got {_kind(meta[key])}")
        return self.text(meta.get("name"), f"{where}.metadata.name")


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__


def _node(reader: _Reader, raw: object, where: str) -> NodeEntry | None:
    entry = reader.mapping(raw, where, NODE_KEYS)
    if not isinstance(raw, Mapping):
        return None
    name = reader.text(entry.get("name"), f"{where}.name")
    allocatable = reader.mapping(entry.get("allocatable"), f"{where}.allocatable")
    if "allocatable" not in entry:
        reader.bad(f"{where}.allocatable", "required (e.g. {cpu: '16', memory: 64Gi})")
    taints = reader.seq(entry.get("taints"), f"{where}.taints")
    for i, taint in enumerate(taints):
        reader.mapping(taint, f"{where}.taints[{i}]", ("key", "value", "effect"))
    return NodeEntry(
        name=name,
        allocatable=allocatable,
        count=reader.count(entry.get("count"), f"{where}.count"),
        labels=reader.labels(entry.get("labels"), f"{where}.labels"),
        annotations=reader.labels(entry.get("annotations"), f"{where}.annotations"),
        taints=tuple(taints),
        unschedulable=reader.flag(entry.get("unschedulable"), f"{where}.unschedulable", False),
        ready=reader.flag(entry.get("ready"), f"{where}.ready", True),
    )


def node_names(entry: NodeEntry) -> list[str]:
    if entry.count == 1:
        return [entry.name]
    return [f"{entry.name}-{i}" for i in range(entry.count)]


def _pod(reader: _Reader, raw: object, where: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        problem = "required: a Pod (metadata and spec)" if raw is None else f"expected a mapping, got {_kind(raw)}"
        reader.bad(where, problem)
        return {}
    reader.metadata_name(raw, where)
    namespace = (raw.get("metadata") or {}).get("namespace") if isinstance(raw.get("metadata"), Mapping) else None
    if namespace is not None:
        reader.text(namespace, f"{where}.metadata.namespace")
    spec = reader.mapping(raw.get("spec"), f"{where}.spec")
    if "spec" not in raw:
        reader.bad(f"{where}.spec", "required (containers, schedulerName, ...)")
    elif not isinstance(spec.get("containers"), list) or not spec.get("containers"):
        reader.bad(f"{where}.spec.containers", "required: a non-empty list")
    else:
        for kind in ("containers", "initContainers"):
            for i, container in enumerate(reader.seq(spec.get(kind), f"{where}.spec.{kind}")):
                if not isinstance(container, Mapping):
                    reader.bad(f"{where}.spec.{kind}[{i}]", f"expected a container (a mapping), got {_kind(container)}")
        reader.problems.extend(pod_volume_problems(spec, f"{where}.spec"))
    return raw


def pod_names(entry: WorkloadEntry) -> list[str]:
    return [pod_name(entry, i) for i in range(entry.count)]


def pod_name(entry: WorkloadEntry, index: int) -> str:
    """The name of copy `index`: the pod's own with count 1, `<name>-<index>` otherwise."""
    base = str(entry.pod["metadata"]["name"])
    return base if entry.count == 1 else f"{base}-{index}"


def pod_namespace(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata")
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    return str(namespace) if namespace else DEFAULT_NAMESPACE


def _selector(reader: _Reader, value: object, where: str) -> dict[str, str] | None:
    if isinstance(value, str):
        out: dict[str, str] = {}
        for part in value.split(","):
            key, sep, item = part.partition("=")
            if not sep or not key.strip():
                reader.bad(where, f"expected key=value pairs separated by commas, got {value!r}")
                return None
            out[key.strip()] = item.strip()
        return out
    return reader.labels(value, where)


def _event(reader: _Reader, raw: object, index: int) -> ScenarioEvent | None:
    where = f"events[{index}]"
    if not isinstance(raw, Mapping):
        reader.bad(where, f"expected a mapping, got {_kind(raw)}")
        return None
    action = raw.get("action")
    if action not in ACTIONS:
        reader.bad(f"{where}.action", f"must be one of {', '.join(ACTIONS)}, got {action!r}")
        return None
    reader.mapping(raw, where, ("at", "action", *EVENT_KEYS[action]))
    at = reader.time(raw.get("at"), f"{where}.at")
    event = ScenarioEvent(index=index, at=at or 0.0, action=action)
    if action in ("remove-node", "cordon-node", "uncordon-node"):
        return _replace(event, name=reader.text(raw.get("name"), f"{where}.name"))
    if action == "add-node":
        if raw.get("node") is None:
            reader.bad(f"{where}.node", "required: {name, allocatable, ...}")
            return None
        return _replace(event, node=_node(reader, raw.get("node"), f"{where}.node"))
    if action == "apply":
        return _apply_event(reader, raw, event, where)
    if action == "resize":
        requests = raw.get("requests")
        if not isinstance(requests, Mapping) or not requests:
            reader.bad(f"{where}.requests", 'required: the pod\'s new requests, e.g. {cpu: "6"}')
            return None
        namespace = raw.get("namespace")
        return _replace(
            event,
            name=reader.text(raw.get("name"), f"{where}.name"),
            namespace=reader.text(namespace, f"{where}.namespace") if namespace is not None else None,
            requests={str(k): v for k, v in requests.items()},
        )
    kind = raw.get("kind")
    if kind not in KINDS:
        reader.bad(f"{where}.kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    name, selector = raw.get("name"), raw.get("selector")
    if (name is None) == (selector is None):
        reader.bad(where, "give exactly one of name or selector")
    if kind in ("Namespace", "Node", *OBJECT_KINDS) and selector is not None:
        reader.bad(f"{where}.selector", f"a {kind} is deleted by name")
    namespace = raw.get("namespace")
    return _replace(
        event,
        kind=str(kind),
        name=reader.text(name, f"{where}.name") if name is not None else None,
        selector=_selector(reader, selector, f"{where}.selector") if selector is not None else None,
        namespace=reader.text(namespace, f"{where}.namespace") if namespace is not None else None,
    )


def _apply_event(reader: _Reader, raw: Mapping[str, Any], event: ScenarioEvent, where: str) -> ScenarioEvent:
    obj = raw.get("object")
    duration = reader.positive_number(raw.get("duration"), f"{where}.duration")
    if not isinstance(obj, Mapping):
        reader.bad(f"{where}.object", "required: a Namespace, ElasticQuota, Pod, {config: ...} or {settings: ...}")
        return event
    if "config" in obj or "settings" in obj:
        reader.mapping(obj, f"{where}.object", ("config", "settings"))
        if "settings" in obj:
            reader.mapping(obj.get("settings"), f"{where}.object.settings")
        return _replace(event, obj=obj)
    kind = object_kind(obj)
    if kind is None:
        kinds = ", ".join(("Namespace", "ElasticQuota", "Pod", *OBJECT_KINDS))
        reader.bad(f"{where}.object", f"cannot tell what this is: give kind, one of {kinds}")
        return event
    if kind == "Pod":
        _pod(reader, obj, f"{where}.object")
    else:
        reader.metadata_name(obj, f"{where}.object")
        reader.problems.extend(shape_problems(kind, obj, f"{where}.object"))
    if duration is not None and kind != "Pod":
        reader.bad(f"{where}.duration", "only a pod has a duration")
    return _replace(event, obj=obj, kind=kind, duration=duration)


def _replace(event: ScenarioEvent, **changes: Any) -> ScenarioEvent:
    return dataclasses.replace(event, **changes)


def _check_unique(reader: _Reader, names: list[tuple[str, str]], what: str) -> None:
    seen: dict[str, str] = {}
    for name, where in names:
        if not name:
            continue
        if name in seen:
            reader.bad(where, f"{what} {name} is already made by {seen[name]}")
        else:
            seen[name] = where


def _named_objects(reader: _Reader, top: Mapping[str, Any], key: str, what: str) -> list[Mapping[str, Any]]:
    """The Kubernetes objects listed under `key`, each with a metadata.name, no name twice."""
    found: list[Mapping[str, Any]] = []
    for i, raw in enumerate(reader.seq(top.get(key), key)):
        if reader.mapping(raw, f"{key}[{i}]") and isinstance(raw, Mapping):
            reader.metadata_name(raw, f"{key}[{i}]")
            found.append(raw)
    _check_unique(reader, [(_name_of(obj), f"{key}[{i}]") for i, obj in enumerate(found)], what)
    return found


def parse_scenario(
    document: object,
    default_name: str = "scenario",
    overrides: Mapping[str, str] | None = None,
    base: Path | None = None,
) -> Scenario:
    """A scenario from its loaded YAML; raises ScenarioError listing every problem.

    `overrides` are `--set` settings, applied over the scenario's own; a bad one raises
    SettingsError (a usage error, not the scenario's). A `trace` file is read from `base`, the
    scenario file's directory (default: the current directory).
    """
    reader = _Reader()
    top = reader.mapping(document, "scenario", TOP_KEYS)
    if not isinstance(document, Mapping):
        raise ScenarioError(reader.problems or ["scenario: expected a mapping"])
    name = default_name if top.get("name") is None else reader.text(top.get("name"), "name")

    settings = Settings()
    raw_settings = reader.mapping(top.get("settings"), "settings")
    try:
        settings = parse_settings(raw_settings)
    except SettingsError as err:
        reader.problems.extend(f"settings.{problem}" for problem in err.problems)
    config: SchedulerConfig | None = None
    raw_config = top.get("config")
    if raw_config is not None and not isinstance(raw_config, (str, Mapping)):
        reader.bad("config", f"expected queues.yaml as a mapping or a string, got {_kind(raw_config)}")
    else:
        try:
            config = load_config(raw_config)
        except ConfigError as err:
            reader.problems.extend(f"config: {problem}" for problem in err.problems)

    nodes = [_node(reader, raw, f"nodes[{i}]") for i, raw in enumerate(reader.seq(top.get("nodes"), "nodes"))]
    node_list = [n for n in nodes if n is not None]
    _check_unique(
        reader,
        [(n, f"nodes[{i}]") for i, entry in enumerate(node_list) for n in node_names(entry)],
        "node",
    )

    node_groups = parse_node_groups(reader, top.get("nodeGroups"), _node)
    taken = {n for entry in node_list for n in node_names(entry)}
    for i, group in enumerate(node_groups):
        if group.name in taken:
            reader.bad(f"nodeGroups[{i}].name", f"{group.name} is a node of nodes: its nodes' names would clash")

    namespaces = _named_objects(reader, top, "namespaces", "namespace")
    quotas = _named_objects(reader, top, "quotas", "ElasticQuota")
    priority_classes = _named_objects(reader, top, "priorityclasses", "PriorityClass")
    for i, pc in enumerate(priority_classes):
        _priority_class(reader, pc, f"priorityclasses[{i}]")
    objects = _objects(reader, top)

    workload: list[WorkloadEntry] = []
    for i, raw in enumerate(reader.seq(top.get("workload"), "workload")):
        where = f"workload[{i}]"
        entry = reader.mapping(raw, where, WORKLOAD_KEYS)
        if not isinstance(raw, Mapping):
            continue
        problems_before = len(reader.problems)
        at = reader.time(entry.get("at"), f"{where}.at", 0.0)
        count = reader.count(entry.get("count"), f"{where}.count")
        duration = reader.positive_number(entry.get("duration"), f"{where}.duration")
        created = reader.earlier(entry.get("created"), f"{where}.created", at or 0.0)
        started = reader.earlier(entry.get("started"), f"{where}.started", at or 0.0)
        every = reader.positive_number(entry.get("every"), f"{where}.every")
        pod = _pod(reader, entry.get("pod"), f"{where}.pod")
        if every is not None and (at or 0.0) + every * (count - 1) > MAX_SECONDS:
            reader.bad(f"{where}.every", f"the last copy would arrive after {MAX_SECONDS:g} s")
        if len(reader.problems) == problems_before:
            workload.append(
                WorkloadEntry(
                    index=i,
                    at=at or 0.0,
                    pod=pod,
                    count=count,
                    duration=duration,
                    created=created,
                    started=started,
                    every=every,
                )
            )
    workload.extend(_trace_workload(reader, top.get("trace"), base, len(workload)))
    total = sum(entry.count for entry in workload)
    if total > MAX_POD_COUNT:
        reader.bad("workload", f"{total} pods in all, more than the {MAX_POD_COUNT} a scenario may hold")
        workload = []
    _check_unique(
        reader,
        [(f"{pod_namespace(w.pod)}/{n}", w.where) for w in workload for n in pod_names(w)],
        "pod",
    )

    events = [_event(reader, raw, i) for i, raw in enumerate(reader.seq(top.get("events"), "events"))]
    until = reader.positive_number(top.get("until"), "until")
    snapshots: list[float] = []
    for i, raw in enumerate(reader.seq(top.get("snapshots"), "snapshots")):
        moment = reader.time(raw, f"snapshots[{i}]", -1.0)
        if moment is not None and moment >= 0:
            if until is not None and moment > until:
                reader.bad(f"snapshots[{i}]", f"{raw} is after until ({top.get('until')})")
            snapshots.append(moment)

    if reader.problems:
        raise ScenarioError(reader.problems)
    if overrides:
        settings = parse_settings(overrides, settings)
    assert config is not None
    return Scenario(
        name=name,
        settings=settings,
        config=config,
        nodes=tuple(node_list),
        namespaces=tuple(namespaces),
        quotas=tuple(quotas),
        priority_classes=tuple(priority_classes),
        objects=tuple(objects),
        workload=tuple(workload),
        events=tuple(e for e in events if e is not None),
        until=until,
        snapshots=tuple(sorted(set(snapshots))),
        node_groups=tuple(node_groups),
    )


def _trace_workload(reader: _Reader, raw: object, base: Path | None, first: int) -> list[WorkloadEntry]:
    """`trace: FILE` or `trace: {file: FILE, at: SECONDS}`: the trace's rows as workload entries,
    numbered after the scenario's own (`at` shifts every arrival)."""
    if raw is None:
        return []
    spec = {"file": raw} if isinstance(raw, str) else reader.mapping(raw, "trace", TRACE_KEYS)
    name = reader.text(spec.get("file"), "trace.file" if isinstance(raw, Mapping) else "trace")
    shift = reader.time(spec.get("at"), "trace.at", 0.0) or 0.0
    if not name:
        return []
    path = Path(name) if base is None or Path(name).is_absolute() else base / name
    try:
        rows = load_trace(path)
    except OSError as err:
        reader.bad("trace", f"cannot read {path}: {err.strerror}")
        return []
    except TraceError as err:
        reader.problems.extend(f"trace: {problem}" for problem in err.problems)
        return []
    return [
        WorkloadEntry(
            index=first + i,
            at=shift + row.arrival,
            pod=trace_pod(row),
            count=row.count,
            duration=row.duration,
            origin=f"{path.name}:{row.line}",
            shape=trace_shape(row),
        )
        for i, row in enumerate(rows)
    ]


def _priority_class(reader: _Reader, obj: Mapping[str, Any], where: str) -> None:
    value = obj.get("value")
    if not isinstance(value, int) or isinstance(value, bool):
        reader.problems.append(f"{where}.value: expected an integer, got {value!r}")


def _objects(reader: _Reader, top: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """`objects:`: Kubernetes objects as applied, each with its kind and metadata.name."""
    found: list[Mapping[str, Any]] = []
    for i, raw in enumerate(reader.seq(top.get("objects"), "objects")):
        where = f"objects[{i}]"
        if not (reader.mapping(raw, where) and isinstance(raw, Mapping)):
            continue
        kind = raw.get("kind")
        if not isinstance(kind, str) or not kind:
            reader.bad(f"{where}.kind", "required: the object's kind, e.g. StorageClass")
            continue
        reader.metadata_name(raw, where)
        if kind == "PriorityClass":
            _priority_class(reader, raw, where)
        reader.problems.extend(shape_problems(kind, raw, where))
        found.append(raw)
    names = [(f"{obj['kind']} {_namespace_of(obj)}{_name_of(obj)}", f"objects[{i}]") for i, obj in enumerate(found)]
    _check_unique(reader, names, "object")
    return found


def _namespace_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    return f"{namespace}/" if isinstance(namespace, str) else ""


def _name_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def read_scenario_document(path: Path) -> object:
    """The scenario file's YAML, not yet checked; OSError if unreadable, ScenarioError if not YAML."""
    try:
        text = read_user_text(path, MAX_SCENARIO_BYTES)
    except ValueError as err:
        raise ScenarioError([str(err)]) from None
    try:
        return load_yaml(text, max_bytes=MAX_SCENARIO_BYTES)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ScenarioError([f"{path}: not valid YAML{where}: {getattr(err, 'problem', None) or err}"]) from None


def load_scenario(path: Path, overrides: Mapping[str, str] | None = None) -> Scenario:
    """Read and check a scenario file; OSError if unreadable, ScenarioError if invalid."""
    return parse_scenario(read_scenario_document(path), path.stem, overrides, path.parent)
