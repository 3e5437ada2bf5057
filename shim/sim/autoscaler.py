"""A cluster-autoscaler playing along in `herder simulate`: it grows and shrinks the scenario's
node groups (shim/sim/node_groups.py) the way cluster-autoscaler does, from what Herder tells it.

Every `SCAN_INTERVAL` seconds (cluster-autoscaler's `--scan-interval`), while something may need
it and something changed since its last look:

- **Scale-up.** It takes the pods whose condition says `Unschedulable` (core/scale_up.py, in
  Kubernetes' words shim/autoscaling.py), leaves out the consumers of a ProvisioningRequest,
  and packs them, largest first, onto the nodes it already asked for and then onto new nodes of
  the first group (in the scenario's order) whose template node takes the pod (its
  allocatable, labels and taints) and that is below its max: cluster-autoscaler's binpacking
  estimator with its `priority` expander. The new nodes join `scaleUpDelay` later; each pod
  that made a node be added gets a `TriggeredScaleUp` event, one that no group can take
  `NotTriggerScaleUp`. Rules between pods are not simulated here (Herder still applies them
  when the node joins).
- **Atomic scale-up.** With `autoscaling.provisioningRequests`, the simulator plays Herder's
  side (a request per gang that lacks only nodes, deleted when it runs: the same
  `plan_requests` the operator follows) and cluster-autoscaler's: the gang's pending members
  are packed all together or not at all (`Provisioned`, or `CapacityIsNotFound` and another
  try at the next change).
- **Scale-down.** A node of a group that has been empty (no pod of anyone on it) for
  `scaleDownAfter` is removed, as long as the group keeps its `min`.

Node-hours are counted per group from the moment a node is asked for (a cloud bills the boot)
until it is removed or the run ends; the scenario's own nodes are counted as `static`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.objects.constraints import NodeConstraints
from core.objects.node import Node
from core.objects.node_index import static_mismatch
from core.objects.node_info import NodeInfo
from core.resources import Resource
from core.scale_up import NODES, GangNeed, ScaleUpView
from core.scheduler import Scheduler
from shim.autoscaling import RequestPlan, RequestState, plan_requests, request_name
from shim.convert.constraints import pod_constraints
from shim.convert.nodes import node_to_info
from shim.convert.objects import ConversionError
from shim.convert.pod_size import pod_resource
from shim.sim.cluster import PENDING, SimCluster
from shim.sim.manifests import node_manifest
from shim.sim.node_groups import NodeGroup

SCAN_INTERVAL = 10.0
STATIC = "static"  # the scenario's own nodes, in the node-hour figures

Join = Callable[[float, Callable[[float], None]], None]  # run this at that time (the engine's agenda)


@dataclass(slots=True)
class _Bin:
    """A node (there, booting, or asked for in this scan) with the room not yet promised to a pod."""

    group: str | None  # None: a node of the scenario's own
    name: str
    info: NodeInfo
    free: Resource
    new: bool = False  # asked for in this scan


@dataclass(slots=True)
class _Group:
    spec: NodeGroup
    info: NodeInfo  # the template node, as the core would read it
    made: int = 0  # nodes made so far: the next is `<group>-<made>`
    added: int = 0
    removed: int = 0
    peak: int = 0
    hours: float = 0.0
    members: set[str] = field(default_factory=set)  # joined nodes
    booting: list[_Bin] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.members) + len(self.booting)


@dataclass(slots=True)
class _Request:
    state: RequestState
    need: GangNeed
    created: float
    provisioned: float | None = None
    deleted: float | None = None
    said: str = ""  # the last outcome reported


class SimAutoscaler:
    def __init__(self, groups: tuple[NodeGroup, ...], cluster: SimCluster, scheduler: Scheduler, join: Join) -> None:
        self._cluster = cluster
        self._scheduler = scheduler
        self._join = join
        self._groups = {
            g.name: _Group(g, node_to_info(node_manifest(g.template, f"{g.name}-template"))) for g in groups
        }
        self._member_of: dict[str, str] = {}
        self._empty_since: dict[str, float] = {}
        # empty nodes pods are expected on (they fit there, as cluster-autoscaler simulates it):
        # needed until the waiting pods change
        self._claimed: set[str] = set()
        self._claims_at = -1  # the view generation the claims were made at
        self._scanned: tuple[int, int, int] | None = None  # what the last scan saw
        self._last_look: float | None = None
        self._counted: float | None = None  # node-hours are counted up to here
        self._static_hours = 0.0
        self._requests: dict[str, _Request] = {}  # by application id
        self._said_no: set[str] = set()  # pods told NotTriggerScaleUp
        self.triggered: set[str] = set()  # pods that made a node be added

    # -- the engine's hooks --------------------------------------------------------------
    def start(self, t: float) -> None:
        """Each group's `min` nodes are there from the start."""
        for group in self._groups.values():
            for _ in range(group.spec.min):
                self._add(group, t, at_once=True)

    def next_time(self) -> float | None:
        """When to look next: the next scan when something waits for it, or a node's idle time's end."""
        due: list[float] = []
        if self._last_look is not None and self._wants_scan():
            due.append(_grid(self._last_look + 1e-9))
        for name, since in self._empty_since.items():
            group = self._groups[self._member_of[name]]
            if group.size > group.spec.min:
                due.append(_grid(since + group.spec.scale_down_after))
        return min(due) if due else None

    def act(self, t: float) -> bool:
        """At a scan tick: scale down, then up; True when a node was removed (the core must settle)."""
        if not math.isclose(t, _grid(t)):
            return False
        removed = self._scale_down(t)
        if self._wants_scan():
            self._scan(t)
        return removed

    def account(self, t: float) -> None:
        """At the start of each moment: the node-hours since the last one, with the nodes there were."""
        if self._counted is not None:
            hours = (t - self._counted) / 3600
            for group in self._groups.values():
                group.hours += group.size * hours
            self._static_hours += (len(self._cluster.nodes) - len(self._member_of)) * hours
        self._counted = t

    def observe(self, t: float) -> None:
        """After each moment: note which nodes are empty (and which are needed all the same)."""
        self._last_look = t
        generation = self._scheduler.scale_up_view().generation
        if generation != self._claims_at:
            self._claimed.clear()
            self._claims_at = generation
        for name in [n for n in self._member_of if n not in self._cluster.nodes]:  # removed by the scenario
            self._groups[self._member_of.pop(name)].members.discard(name)
            self._empty_since.pop(name, None)
            self._claimed.discard(name)
        for name in self._member_of:
            if self._cluster.used.get(name):
                self._empty_since.pop(name, None)
                self._claimed.discard(name)
            elif name not in self._claimed:
                self._empty_since.setdefault(name, t)

    def node_counts(self) -> dict[str, int]:
        counts = {name: group.size for name, group in self._groups.items()}
        counts[STATIC] = len(self._cluster.nodes) - len(self._member_of)
        return counts

    def report(self) -> dict[str, Any]:
        groups: dict[str, Any] = {}
        for name, group in self._groups.items():
            entry: dict[str, Any] = {
                "nodes": group.size,
                "peak": group.peak,
                "added": group.added,
                "removed": group.removed,
                "nodeHours": round(group.hours, 3),
            }
            if group.spec.cost_per_hour is not None:
                entry["cost"] = round(group.hours * group.spec.cost_per_hour, 2)
            groups[name] = entry
        return {
            "groups": groups,
            STATIC: {
                "nodes": len(self._cluster.nodes) - len(self._member_of),
                "nodeHours": round(self._static_hours, 3),
            },
            "nodeHours": round(sum(g.hours for g in self._groups.values()) + self._static_hours, 3),
            "triggeredScaleUp": len(self.triggered),
            "provisioningRequests": [
                {
                    "name": r.state.name,
                    "namespace": r.state.namespace,
                    "application": r.state.application_id,
                    "created": r.created,
                    "provisioned": r.provisioned,
                    "deleted": r.deleted,
                }
                for r in self._requests.values()
            ],
        }

    # -- deciding ------------------------------------------------------------------------
    def _stamp(self, view: ScaleUpView) -> tuple[int, int, int]:
        return (view.generation, self._cluster.changes, sum(len(g.booting) for g in self._groups.values()))

    def _wants_scan(self) -> bool:
        view = self._scheduler.scale_up_view()
        if self._stamp(view) == self._scanned:
            return False
        plan = self._plan(view)
        if plan.create or plan.delete:
            return True
        if any(r.provisioned is None and r.deleted is None for r in self._requests.values()):
            return True
        return bool(self._unschedulable(view))

    def _plan(self, view: ScaleUpView) -> RequestPlan:
        live = {app: r.state for app, r in self._requests.items() if r.deleted is None}
        return plan_requests(view.gangs, live, self._scheduler.settings.provisioning_requests)

    def _unschedulable(self, view: ScaleUpView) -> list[str]:
        consumers = {key for r in self._requests.values() if r.deleted is None for key in r.need.pods}
        pods = self._cluster.by_key
        return [
            key
            for key, condition in view.conditions.items()
            if condition.category == NODES
            and key not in consumers
            and key in pods
            and pods[key].state == PENDING
            and not pods[key].placeholder
        ]

    def _scan(self, t: float) -> None:
        view = self._scheduler.scale_up_view()
        self._follow_requests(view, t)
        packer = _Packer(self._groups, self._cluster, self._member_of)
        for request in self._requests.values():
            if request.deleted is None and request.provisioned is None:
                self._provision(request, packer, t)
        for key, resource, constraints in self._largest_first(view):
            placed = packer.place(resource, constraints)
            pod = self._cluster.by_key[key]
            if placed is None:
                if key not in self._said_no:
                    self._said_no.add(key)
                    self._note(t, pod.full_name, "NotTriggerScaleUp", "no node group can take it (or all are at max)")
            elif placed.new and key not in self.triggered:
                self.triggered.add(key)
                self._note(t, pod.full_name, "TriggeredScaleUp", f"pod triggered scale-up of group {placed.group}")
            elif placed.name in self._empty_since:
                self._claim(placed.name, view)  # a pod is expected there: the node is needed
        self._commit(packer, t)
        self._scanned = self._stamp(self._scheduler.scale_up_view())

    def _largest_first(self, view: ScaleUpView) -> list[tuple[str, Resource, NodeConstraints]]:
        """The Unschedulable pods, largest first (cluster-autoscaler's binpacking order)."""
        items = []
        for key in self._unschedulable(view):
            pod = self._cluster.by_key[key]
            try:
                items.append((key, pod_resource(pod.manifest), pod_constraints(pod.manifest)))
            except ConversionError:
                continue
        items.sort(key=lambda item: (-item[1].get_value("vcore"), -item[1].get_value("memory"), item[0]))
        return items

    def _claim(self, name: str, view: ScaleUpView) -> None:
        self._empty_since.pop(name, None)
        self._claimed.add(name)
        self._claims_at = view.generation

    def _follow_requests(self, view: ScaleUpView, t: float) -> None:
        """Herder's side: requests made for gangs that lack only nodes, deleted once they run."""
        plan = self._plan(view)
        for state in plan.delete:
            request = self._requests[state.application_id]
            request.deleted = t
            self._note(t, f"{state.namespace}/{state.name}", "ProvisioningRequestDeleted", "its gang runs or left")
        for need, attempt in plan.create:
            name = request_name(need.namespace, need.application_id, attempt)
            state = RequestState(need.application_id, need.namespace, name, attempt, pods=need.pods)
            self._requests[need.application_id] = _Request(state, need, t)
            self._note(t, f"{need.namespace}/{name}", "ProvisioningRequestCreated", f"for gang {need.application_id}")

    def _provision(self, request: _Request, packer: _Packer, t: float) -> None:
        """cluster-autoscaler's side: the gang's pending members all at once, or none."""
        trial = packer.copy()
        for group, count in request.need.groups:
            for _ in range(count):
                if trial.place(group.min_resource, group.constraints) is None:
                    said = "CapacityIsNotFound: no node group can hold the whole gang"
                    if request.said != said:
                        request.said = said
                        where = f"{request.state.namespace}/{request.state.name}"
                        self._note(t, where, "ProvisioningRequestNotProvisioned", said)
                    return
        packer.take(trial)
        request.provisioned = t
        request.state.provisioned = True
        self._note(t, f"{request.state.namespace}/{request.state.name}", "Provisioned", "CapacityIsProvisioned")

    # -- changing the cluster ------------------------------------------------------------
    def _commit(self, packer: _Packer, t: float) -> None:
        for bin_ in packer.new:
            assert bin_.group is not None  # a new node is always a group's
            self._add(self._groups[bin_.group], t)

    def _add(self, group: _Group, t: float, at_once: bool = False) -> None:
        name = f"{group.spec.name}-{group.made}"
        group.made += 1
        group.added += 0 if at_once else 1
        booting = _Bin(group.spec.name, name, group.info, group.info.capacity)
        group.booting.append(booting)
        group.peak = max(group.peak, group.size)

        def joined(now: float) -> None:
            group.booting.remove(booting)
            self._cluster.add_node(node_manifest(group.spec.template, name), now)
            if name in self._cluster.nodes:
                group.members.add(name)
                self._member_of[name] = group.spec.name
                self._empty_since[name] = now

        if at_once:
            joined(t)
        else:
            self._join(t + group.spec.scale_up_delay, joined)
            self._note(t, name, "ScaleUp", f"group {group.spec.name} grows to {group.size} of max {group.spec.max}")

    def _scale_down(self, t: float) -> bool:
        due = [
            name
            for name, since in sorted(self._empty_since.items(), key=lambda item: (item[1], item[0]))
            if t - since + 1e-9 >= self._groups[self._member_of[name]].spec.scale_down_after
        ]
        if not due:
            return False
        view = self._scheduler.scale_up_view()
        packer = _Packer(self._groups, self._cluster, self._member_of)
        expected = set()
        for _, resource, constraints in self._largest_first(view):
            placed = packer.place(resource, constraints, grow=False)
            if placed is not None:
                expected.add(placed.name)
        removed = False
        for name in due:
            group = self._groups[self._member_of[name]]
            if name in expected:
                self._claim(name, view)
                continue
            if group.size <= group.spec.min:
                continue
            since = self._empty_since.pop(name)
            self._cluster.remove_node(name, t)
            group.members.discard(name)
            group.removed += 1
            del self._member_of[name]
            self._note(
                t, name, "ScaleDown", f"empty for {t - since:g} s: group {group.spec.name} shrinks to {group.size}"
            )
            removed = True
        return removed

    def _note(self, t: float, object_id: str, reason: str, message: str) -> None:
        self._cluster.note(t, object_id, reason, message)


class _Packer:
    """Room for pods, as cluster-autoscaler's simulation sees it: on the nodes there (a pod that
    fits one counts as schedulable, whatever holds it back), then on the nodes booting, then on
    new nodes of the first group that takes it."""

    def __init__(self, groups: Mapping[str, _Group], cluster: SimCluster, member_of: Mapping[str, str]) -> None:
        self._groups = groups
        self.bins = [
            _Bin(member_of.get(name), name, info, cluster.room(name))
            for name, info in cluster.infos.items()
            if info.schedulable and info.ready
        ]
        self.bins += [_Bin(b.group, b.name, b.info, b.free) for g in groups.values() for b in g.booting]
        self._sizes = {name: group.size for name, group in groups.items()}

    @property
    def new(self) -> list[_Bin]:
        return [b for b in self.bins if b.new]

    def copy(self) -> _Packer:
        other = _Packer.__new__(_Packer)
        other._groups = self._groups
        other.bins = [_Bin(b.group, b.name, b.info, b.free, b.new) for b in self.bins]
        other._sizes = dict(self._sizes)
        return other

    def take(self, other: _Packer) -> None:
        self.bins, self._sizes = other.bins, other._sizes

    def place(self, resource: Resource, constraints: NodeConstraints, grow: bool = True) -> _Bin | None:
        """Promise room to a pod on a node there or coming, else (`grow`) on a new node; None if nowhere."""
        for bin_ in self.bins:
            if resource.fits_in(bin_.free) and static_mismatch(Node(bin_.info), constraints) is None:
                bin_.free = bin_.free - resource
                return bin_
        if not grow:
            return None
        for name, group in self._groups.items():
            if self._sizes[name] >= group.spec.max:
                continue
            if resource.fits_in(group.info.capacity) and static_mismatch(Node(group.info), constraints) is None:
                fresh = _Bin(name, f"{name}#{len(self.bins)}", group.info, group.info.capacity - resource, new=True)
                self.bins.append(fresh)
                self._sizes[name] += 1
                return fresh
        return None


def _grid(t: float) -> float:
    """The first scan tick at or after `t`."""
    return round(math.ceil(t / SCAN_INTERVAL - 1e-9) * SCAN_INTERVAL, 9)
