"""Small scheduling worlds: a real `Scheduler`, a few nodes and pods, in a few lines.

A `World` owns a scheduler on a virtual clock and records what comes out of it (binds,
evictions, events). Pods are keyed by their name, so a test speaks of "p1" throughout:

    world = World(QUEUES)
    world.node("n1", cpu=4)
    world.pod("p1", queue="root.a", cpu=1)
    assert world.schedule() == {"p1": "n1"}

Sizes are given as people write them (`cpu=1.5`, `memory="2Gi"`) and held in core units
(vcore millicores, memory bytes). Everything a test checks is read through the scheduler's
public documents, as the REST API and the simulator read it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from core.config import load_config
from core.config.settings import Settings
from core.elastic.spec import ElasticQuotaSpec
from core.events import SchedulingEvent
from core.objects.ask import Allocation, Ask, UserGroup
from core.objects.constraints import (
    NO_CONSTRAINTS,
    NodeConstraints,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Taint,
    Toleration,
)
from core.objects.node_info import NodeInfo
from core.objects.pod_rules import NO_RULES, PodRules
from core.resources import Resource, quantity_milli, quantity_value
from core.scheduler import Scheduler

Quantity = str | int | float


def res(cpu: Quantity | None = None, memory: Quantity | None = None, pods: int | None = None, **other: int) -> Resource:
    """A resource vector in core units from Kubernetes-style amounts (`cpu=1.5` -> vcore 1500)."""
    values: dict[str, int] = {}
    if cpu is not None:
        values["vcore"] = quantity_milli(cpu)
    if memory is not None:
        values["memory"] = quantity_value(memory)
    if pods is not None:
        values["pods"] = pods
    for key, val in other.items():
        values[key] = val
    return Resource(values)


def affinity(*terms: Iterable[tuple[str, str, tuple[str, ...]]]) -> tuple[NodeSelectorTerm, ...]:
    """Required node affinity terms: each a list of (key, operator, values)."""
    return tuple(
        NodeSelectorTerm(tuple(NodeSelectorRequirement(key, op, tuple(values)) for key, op, values in term))
        for term in terms
    )


def queues_config(children: str, *, root_properties: str = "", partition: str = "") -> str:
    """queues.yaml with the `provided` placement rule: `children` are root's queues (a YAML list),
    `root_properties` a flow mapping of root's properties, `partition` one more partition key."""
    body = textwrap.indent(textwrap.dedent(children).strip("\n"), " " * 10)
    props = f"\n        properties: {root_properties}" if root_properties else ""
    extra = f"\n    {partition}" if partition else ""
    return (
        "partitions:\n  - name: default\n    placementrules: [{name: provided}]"
        f'{extra}\n    queues:\n      - name: root\n        submitacl: "*"{props}\n        queues:\n{body}\n'
    )


class Outputs:
    """The shim side of the interface: records every callback; `on_bind` may act on a bind."""

    def __init__(self) -> None:
        self.binds: list[Allocation] = []
        self.evictions: list[tuple[Allocation, str]] = []
        self.events: list[SchedulingEvent] = []
        self.on_bind: Callable[[Allocation], None] | None = None
        self.on_evict: Callable[[Allocation, str], None] | None = None

    def bind(self, allocation: Allocation) -> None:
        self.binds.append(allocation)
        if self.on_bind is not None:
            self.on_bind(allocation)

    def evict(self, allocation: Allocation, reason: str) -> None:
        self.evictions.append((allocation, reason))
        if self.on_evict is not None:
            self.on_evict(allocation, reason)

    def report(self, event: SchedulingEvent) -> None:
        self.events.append(event)

    def reasons(self, *reasons: str) -> list[SchedulingEvent]:
        return [e for e in self.events if e.reason in reasons]

    def evicted(self) -> list[str]:
        """The keys of the pods the core asked to evict, in order."""
        return [allocation.key for allocation, _ in self.evictions]


class World:
    def __init__(self, config: str | None = None, *, settings: Settings | None = None) -> None:
        self.now = 0.0
        self.out = Outputs()
        cfg = load_config(textwrap.dedent(config)) if config is not None else None
        self.sched = Scheduler(self.out, cfg, settings, clock=lambda: self.now)
        self.asks: dict[str, Ask] = {}
        self._seen_binds = 0

    # -- inputs --------------------------------------------------------------------------
    def configure(self, config: str) -> None:
        self.sched.update_config(load_config(textwrap.dedent(config)))

    def node(
        self,
        name: str,
        cpu: Quantity = 8,
        memory: Quantity = "16Gi",
        pods: int = 110,
        *,
        labels: Mapping[str, str] | None = None,
        taints: Iterable[Taint] = (),
        schedulable: bool = True,
        ready: bool = True,
        **other: int,
    ) -> NodeInfo:
        info = NodeInfo(
            node_id=name,
            capacity=res(cpu, memory, pods, **other),
            labels=dict(labels or {}),
            taints=tuple(taints),
            schedulable=schedulable,
            ready=ready,
        )
        self.sched.update_node(info)
        return info

    def ask(
        self,
        name: str,
        *,
        app: str | None = None,
        queue: str | None = None,
        namespace: str = "default",
        cpu: Quantity = 1,
        memory: Quantity = "1Gi",
        priority: int = 0,
        user: str = "alice",
        groups: Iterable[str] = (),
        created: float | None = None,
        selector: Mapping[str, str] | None = None,
        required: tuple[NodeSelectorTerm, ...] = (),
        tolerations: Iterable[Toleration] = (),
        unsupported_required: Iterable[str] = (),
        unsupported_preferred: Iterable[str] = (),
        quota: str | None = None,
        preemptible: bool = True,
        allow_preemption: bool = True,
        tags: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        **other: int,
    ) -> Ask:
        """An ask as the shim would build it for pod `<namespace>/<name>` (not yet submitted).

        Without `app`, pods of one namespace and user share an application ("app" for alice's in
        default), as an application belongs to one namespace and one user.
        """
        if app is None:
            app = "app" if (namespace, user) == ("default", "alice") else f"app-{namespace}-{user}"
        constraints = NodeConstraints(
            node_selector=tuple(sorted((selector or {}).items())),
            required_terms=required,
            tolerations=tuple(tolerations),
            unsupported_required=tuple(unsupported_required),
            unsupported_preferred=tuple(unsupported_preferred),
        )
        return Ask(
            key=name,
            application_id=app,
            resource=res(cpu, memory, 1, **other),
            name=f"{namespace}/{name}",
            namespace=namespace,
            queue=queue,
            tags={"namespace": namespace, **(tags or {})},
            user=UserGroup(user, tuple(groups)),
            priority=priority,
            constraints=constraints if constraints != NO_CONSTRAINTS else NO_CONSTRAINTS,
            quota=quota,
            preemptible=preemptible,
            allow_preemption=allow_preemption,
            created=self.now if created is None else created,
            pod=PodRules(namespace=namespace, labels=dict(labels)) if labels else NO_RULES,
        )

    def pod(self, name: str, **kw: Any) -> Ask:
        """Submit a pending pod (see `ask` for the keywords)."""
        ask = self.ask(name, **kw)
        self.asks[name] = ask
        self.sched.add_ask(ask)
        return ask

    def pods(self, count: int, prefix: str = "p", **kw: Any) -> list[str]:
        names = [f"{prefix}{i}" for i in range(count)]
        for name in names:
            self.pod(name, **kw)
        return names

    def running(self, name: str, node: str, **kw: Any) -> Allocation:
        """A Herder pod found already bound (recovery at start-up)."""
        ask = self.ask(name, **kw)
        self.asks[name] = ask
        allocation = Allocation.for_ask(ask, node, self.now)
        self.sched.add_allocation(allocation)
        return allocation

    def foreign(
        self, name: str, node: str, cpu: Quantity = 1, memory: Quantity = "1Gi", static: bool = False
    ) -> Allocation:
        """A pod another scheduler placed (or a static pod of the kubelet)."""
        allocation = Allocation(
            key=name, node_id=node, resource=res(cpu, memory, 1), foreign="static" if static else "default"
        )
        self.sched.add_allocation(allocation)
        return allocation

    def quota(self, name: str, *, namespace: str = "", parent: str = "", is_parent: bool = False, **kw: Any) -> None:
        """An ElasticQuota; `min`/`max` are dicts of Kubernetes-style amounts (`{"cpu": 4}`)."""
        self.sched.update_quota(
            ElasticQuotaSpec(
                name=name,
                namespace=namespace or name,
                min=res(**kw.get("min", {})),
                max=res(**kw.get("max", {})),
                parent=parent,
                is_parent=is_parent,
                allow_lent_resource=kw.get("allow_lent", True),
            )
        )

    def finish(self, *names: str) -> None:
        for name in names:
            self.sched.release_allocation(name)

    def schedule(self, advance: float = 0.0) -> dict[str, str]:
        """Run one cycle (after moving the clock); the pods bound by it, by node."""
        self.now += advance
        self.sched.schedule()
        new = self.out.binds[self._seen_binds :]
        self._seen_binds = len(self.out.binds)
        return {a.key: a.node_id for a in new}

    # -- reading -------------------------------------------------------------------------
    def node_of(self, name: str) -> str | None:
        allocation = self.sched.allocation(name)
        return allocation.node_id if allocation is not None else None

    def reason(self, name: str) -> str | None:
        return self.sched.pending_reason(name)

    def queue(self, path: str) -> dict[str, Any]:
        doc = self.sched.queue_document(path)
        assert doc is not None, f"no queue {path}"
        return doc

    def has_queue(self, path: str) -> bool:
        return self.sched.queue_document(path) is not None

    def allocated(self, path: str) -> dict[str, int]:
        return dict(self.queue(path)["allocatedResource"])

    def app(self, app_id: str) -> dict[str, Any]:
        docs = [d for d in self.sched.applications_document() if d["applicationID"] == app_id]
        assert docs, f"no application {app_id}"
        return docs[0]

    def app_state(self, app_id: str) -> str:
        return str(self.app(app_id)["applicationState"])

    def node_doc(self, name: str) -> dict[str, Any]:
        return next(d for d in self.sched.nodes_document() if d["nodeID"] == name)

    def user_usage(self, user: str, path: str = "root") -> dict[str, int]:
        doc = self.sched.user_document(user)
        return {} if doc is None else _usage_at(doc["queues"], path)

    def group_usage(self, group: str, path: str = "root") -> dict[str, int]:
        doc = self.sched.group_document(group)
        return {} if doc is None else _usage_at(doc["queues"], path)

    def quota_used(self, name: str) -> dict[str, int]:
        return self.sched.quota_status()[name].used.without_zeros().to_dict()

    def usage_snapshot(self) -> dict[str, Any]:
        """Every tracker's usage: queues, nodes, users, groups, quotas (for exact-rollback checks)."""
        dump = self.sched.state_dump()
        return {
            "queues": _queue_usage(dump["queues"]),
            "nodes": {n["nodeID"]: (_used(n["allocated"]), _used(n["occupied"])) for n in dump["nodes"]},
            "users": dump["usage"]["users"],
            "groups": dump["usage"]["groups"],
            "quotas": {
                name: status.used.without_zeros().to_dict() for name, status in self.sched.quota_status().items()
            },
        }


def _usage_at(tree: dict[str, Any] | None, path: str) -> dict[str, int]:
    node = tree
    while node is not None and node["queuePath"] != path:
        node = next(
            (c for c in node.get("children") or [] if path == c["queuePath"] or path.startswith(c["queuePath"] + ".")),
            None,
        )
    return {} if node is None else dict(node.get("resourceUsage") or {})


def _queue_usage(doc: dict[str, Any]) -> dict[str, Any]:
    out = {doc["queuename"]: (doc["allocatedResource"], doc["runningApps"])}
    for child in doc["children"]:
        out.update(_queue_usage(child))
    return out


def _used(resource: dict[str, int]) -> dict[str, int]:
    """A node document's resource without the zeros it prints for every resource of its capacity."""
    return {key: val for key, val in resource.items() if val}
