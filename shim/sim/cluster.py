"""The simulated cluster: API server, kubelets and the other schedulers, around the real core.

It holds Kubernetes objects as plain dicts and feeds the core exactly as the operator does,
through `shim/convert/`: nodes with `node_to_info`, namespaces as ask tags, ElasticQuotas
with `quota_to_spec`, Herder's pods with `pod_to_ask`, everybody else's with
`pod_to_allocation`. The core answers through `SimCallbacks`, which only records; `deliver`
then plays the API server: a bind makes the pod Running on its node (the kubelet refuses a
pod that does not fit, which would be a core bug) and schedules its end after its duration,
an eviction deletes the pod and tells the core with `release_allocation`.

Gang placeholders are played as the operator plays them: the core's bind of a placeholder
creates the placeholder pod (shim/placeholders.py) already on its node; a bind that `replaces`
a placeholder deletes it first (state `Replaced`); an eviction of a placeholder deletes it
(state `Released`). Placeholders are listed among the pods with `placeholder: true` but not
counted with the real pods. The objects of the PodGroup APIs (`objects:` and `apply`) are
kept as the operator's watch keeps them: a pod naming one is read with its definition, and
the pods waiting for a group are read again when it comes. A Hard gang that times out ends
its waiting pods `Failed`, as the operator marks them (unless `gang.failPodsOnTimeout` is off).

Pods of other schedulers are placed as another scheduler would: on `spec.nodeName`, else on
the first node they fit (in the order nodes were added); one that fits nowhere waits and is
tried again whenever capacity may have freed.

Bad input never stops the run: what the conversion or the core refuses becomes a pending
reason on the pod or a `SCENARIO` event naming the object and the problem.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from core.config import ConfigError, SettingsError, load_config, parse_settings
from core.events import REQUEST, SchedulingEvent
from core.gang.spec import TIMEOUT_REASON
from core.objects.ask import Allocation, Ask
from core.objects.disruption_budget import DisruptionBudget
from core.objects.node import Node
from core.objects.node_index import static_mismatch
from core.objects.node_info import NodeInfo
from core.resources import Resource, format_resource
from core.scheduler import Scheduler
from shim.convert.constraints import pod_constraints
from shim.convert.deadline import active_deadline
from shim.convert.gang_sources import GroupKey, group_ref, kind_of
from shim.convert.gangs.pod_gang import GroupDefinition
from shim.convert.identity import is_herder_pod
from shim.convert.nodes import node_to_info
from shim.convert.objects import ConversionError, labels_of, map_at
from shim.convert.pod_size import pod_resource
from shim.convert.pod_view import read_pod
from shim.convert.pods import ask_for_copy, ask_for_sibling, pod_to_allocation, pod_to_ask
from shim.convert.priority import with_priority_class
from shim.convert.quotas import LABEL_IS_PARENT, quota_to_spec
from shim.convert.rules import string_labels
from shim.placeholders import placeholder_manifest
from shim.sim.disruption import DisruptionBudgets
from shim.sim.manifests import labels_match, namespace_manifest, rfc3339
from shim.sim.scenario import DEFAULT_NAMESPACE
from shim.sim.storage import STORAGE_KINDS, SimStorage

PENDING = "Pending"
RUNNING = "Running"
SUCCEEDED = "Succeeded"
EVICTED = "Evicted"  # removed after it was bound (evicted, preempted, with its node, deleted)
DELETED = "Deleted"  # deleted while pending: it never ran
FAILED = "Failed"  # ended by the kubelet at its activeDeadlineSeconds, or its Hard gang timed out (pending)
FOREIGN = "Foreign"
REPLACED = "Replaced"  # a placeholder a real pod took the place of
RELEASED = "Released"  # a placeholder deleted unused (timeout, completion, too small)

SCENARIO = "SCENARIO"  # type of the simulator's own events in the report


@dataclass(slots=True)
class SimPod:
    """A pod in the simulated cluster and what happened to it."""

    key: str  # the pod's uid: the core's key
    namespace: str
    name: str
    manifest: dict[str, Any]
    herder: bool
    created: float
    duration: float | None
    state: str
    node: str | None = None
    bound: float | None = None
    finished: float | None = None
    evicted: float | None = None
    reason: str | None = None
    queue: str | None = None
    quota: str | None = None
    user: str | None = None
    application: str | None = None
    resource: Resource | None = None  # what it occupies on its node while there
    placeholder: bool = False
    wake_after: float | None = None  # the core has a timer running out this long after the pod starts

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def live(self) -> bool:
        """Still an object in the cluster (pending, running, or a foreign pod not yet gone)."""
        return self.state in (PENDING, RUNNING) or (self.state == FOREIGN and self.finished is None)


class SimCallbacks:
    """The core's outputs: binds and evictions wait for `deliver` in the order the core asked for
    them (a bind's reason is None), events go to the journal."""

    def __init__(self) -> None:
        self.outputs: list[tuple[Allocation, str | None]] = []
        self.failures: list[tuple[str, str]] = []  # (pod key, why): pods of a Hard gang that timed out
        self.journal: list[dict[str, Any]] = []

    def bind(self, allocation: Allocation) -> None:
        self.outputs.append((allocation, None))

    def evict(self, allocation: Allocation, reason: str) -> None:
        self.outputs.append((allocation, reason))

    def report(self, event: SchedulingEvent) -> None:
        self.journal.append(event.to_dict())
        if event.type == REQUEST and event.reason == TIMEOUT_REASON:
            self.failures.append((event.object_id, event.message))


PodHook = Callable[[float, "SimPod"], None]


def pod_deadline(manifest: Mapping[str, Any]) -> float | None:
    """The pod's activeDeadlineSeconds (a bad value is the conversion's problem: none here)."""
    try:
        return active_deadline(manifest)
    except ConversionError:
        return None


@dataclass
class AskMemo:
    """The ask of the first copy of a workload entry created in one moment, or (`siblings`) of
    the first pod of a shape that trace rows share: the same pod but for its name and
    application, kept across moments while its namespace object stays the one it was read with."""

    ask: Ask | None = None
    siblings: bool = False
    namespace: Mapping[str, Any] | None = None


class SimCluster:
    def __init__(self, scheduler: Scheduler, callbacks: SimCallbacks, on_start: PodHook, on_app_idle: PodHook) -> None:
        self.scheduler = scheduler
        self.callbacks = callbacks
        self._on_start = on_start  # the engine schedules the pod's end
        self._on_app_idle = on_app_idle  # the engine wakes up when the core completes the application
        self._app_pods: dict[str, int] = {}  # live pods per application id
        self.nodes: dict[str, dict[str, Any]] = {}
        self.infos: dict[str, NodeInfo] = {}
        self.used: dict[str, Resource] = {}
        self.namespaces: dict[str, dict[str, Any]] = {}
        self.quotas: dict[str, dict[str, Any]] = {}
        self.priority_classes: dict[str, Mapping[str, Any]] = {}
        self.groups: dict[GroupKey, GroupDefinition] = {}  # the PodGroup APIs' objects, read
        self.storage = SimStorage(scheduler, self.note)
        self.budgets = DisruptionBudgets()
        self._told_budgets: dict[tuple[str, str], DisruptionBudget] = {}  # what the core was told last
        self.pods: dict[str, SimPod] = {}  # "<ns>/<name>" -> the newest pod of that name
        self.by_key: dict[str, SimPod] = {}
        self.waiting_foreign: list[SimPod] = []
        self.changes = 0  # inputs given to the core; the engine compares it between moments
        self._refused_binds: set[str] = set()
        self.counts = dict.fromkeys((PENDING, RUNNING, SUCCEEDED, FAILED, EVICTED, DELETED, FOREIGN), 0)

    def _move(self, pod: SimPod, state: str, now: float) -> None:
        self.counts[pod.state] -= 1
        self.counts[state] += 1
        pod.state = state
        if not pod.live and pod.application is not None:
            left = self._app_pods[pod.application] = self._app_pods[pod.application] - 1
            if left == 0:
                self._on_app_idle(now, pod)

    # -- journal -------------------------------------------------------------------------
    def note(self, now: float, object_id: str, reason: str, message: str = "") -> None:
        self.callbacks.journal.append(
            {"timestamp": now, "type": SCENARIO, "objectID": object_id, "reason": reason, "message": message}
        )

    # -- nodes ---------------------------------------------------------------------------
    def add_node(self, manifest: dict[str, Any], now: float) -> None:
        name = str(manifest["metadata"]["name"])
        if name in self.nodes:
            self.note(now, name, "NodeRefused", f"node {name} already exists")
            return
        try:
            info = node_to_info(manifest)
        except ConversionError as err:
            self.note(now, name, "NodeRefused", str(err))
            return
        self.nodes[name] = manifest
        self.infos[name] = info
        self.used[name] = Resource()
        self.scheduler.update_node(info, now)
        self.changes += 1

    def set_unschedulable(self, name: str, unschedulable: bool, now: float) -> None:
        manifest = self.nodes.get(name)
        if manifest is None:
            self.note(now, name, "NodeNotFound", f"cannot {'cordon' if unschedulable else 'uncordon'} node {name}")
            return
        manifest["spec"]["unschedulable"] = unschedulable
        self.infos[name] = node_to_info(manifest)
        self.scheduler.update_node(self.infos[name], now)
        self.changes += 1

    def remove_node(self, name: str, now: float) -> None:
        if name not in self.nodes:
            self.note(now, name, "NodeNotFound", f"cannot remove node {name}: no such node")
            return
        for pod in sorted(self._pods_on(name), key=lambda p: p.key):
            self._gone(pod, now, f"node {name} was removed")
        self.scheduler.remove_node(name, now)
        del self.nodes[name], self.infos[name], self.used[name]
        self.changes += 1

    def _pods_on(self, node: str) -> Iterator[SimPod]:
        return (p for p in self.by_key.values() if p.node == node and p.live)

    def _occupy(self, pod: SimPod, node: str, resource: Resource, now: float) -> None:
        pod.node, pod.resource, pod.bound = node, resource, now
        self.used[node] = self.used[node] + resource
        pod.manifest["spec"]["nodeName"] = node
        pod.manifest["status"] = {"phase": "Running", "startTime": rfc3339(now)}

    def _vacate(self, pod: SimPod) -> None:
        if pod.node is not None and pod.resource is not None and pod.node in self.used:
            self.used[pod.node] = (self.used[pod.node] - pod.resource).without_zeros()

    def _room(self, node: str) -> Resource:
        return (self.infos[node].capacity - self.used[node]).clamp_non_negative()

    def room(self, node: str) -> Resource:
        """What the node's kubelet has free."""
        return self._room(node)

    def resized(self, pod: SimPod, resource: Resource) -> None:
        """A running pod now holds `resource` on its node (an in-place resize the kubelet granted)."""
        self._vacate(pod)
        pod.resource = resource
        if pod.node is not None and pod.node in self.used:
            self.used[pod.node] = self.used[pod.node] + resource

    # -- namespaces, quotas, config, settings ----------------------------------------------
    def namespace(self, name: str) -> dict[str, Any]:
        if name not in self.namespaces:
            self.namespaces[name] = namespace_manifest(name)
        return self.namespaces[name]

    def apply_namespace(self, manifest: Mapping[str, Any], now: float) -> None:
        name = str(manifest["metadata"]["name"])
        self.namespaces[name] = dict(manifest)
        self.scheduler.set_namespace_labels(name, string_labels(manifest))
        for pod in self._pending_in(name):
            self.scheduler.add_ask(self.ask_of(pod), now)
        self.changes += 1

    def apply_object(self, manifest: Mapping[str, Any], now: float) -> None:
        """One of `objects:` (or an `apply` event's object): storage, a PriorityClass, or a kind
        the simulator does not use (noted, not an error: it is valid Kubernetes)."""
        kind = str(manifest.get("kind"))
        name = str((manifest.get("metadata") or {}).get("name") or "")
        group_kind = kind_of(manifest)
        if group_kind is not None:
            self._apply_group(group_kind.key(manifest), group_kind.definition(manifest), now)
        elif kind in STORAGE_KINDS:
            self.storage.apply(manifest, now)
        elif kind == "PodDisruptionBudget":
            try:
                self.budgets.apply(manifest)
            except ConversionError as err:
                self.note(now, f"{kind} {name}", "ObjectRefused", str(err))
                return
        elif kind == "PriorityClass":
            self.priority_classes[name] = manifest
        else:
            self.note(now, f"{kind} {name}", "ObjectIgnored", f"Herder's simulator does not use {kind} objects")
            return
        self.changes += 1

    def _apply_group(self, key: GroupKey, definition: GroupDefinition, now: float) -> None:
        """A PodGroup or Workload: kept (read), and the pending pods naming it read again."""
        if definition.problem:
            self.note(now, f"{key[1]} {key[2]}/{key[3]}", "ObjectRefused", definition.problem)
        self.groups[key] = definition
        for pod in self.by_key.values():
            if pod.state == PENDING and pod.herder and self._names_group(pod, key):
                self.scheduler.add_ask(self.ask_of(pod), now)

    @staticmethod
    def _names_group(pod: SimPod, key: GroupKey) -> bool:
        try:
            ref = group_ref(read_pod(pod.manifest))
        except ConversionError:
            return False
        return ref is not None and ref.key == key

    def ask_of(self, pod: SimPod) -> Ask:
        """The pod's ask as the operator would read it now (its namespace, the groups known)."""
        return pod_to_ask(pod.manifest, self.namespace(pod.namespace), self._scheduler_name, groups=self.groups.get)

    def delete_object(self, kind: str, namespace: str | None, name: str, now: float) -> bool:
        if kind in ("PodGroup", "Workload"):
            keys = [key for key in self.groups if key[1:] == (kind, namespace or DEFAULT_NAMESPACE, name)]
            for key in keys:
                del self.groups[key]
            found = bool(keys)
        elif kind == "PriorityClass":
            found = self.priority_classes.pop(name, None) is not None
        elif kind == "PodDisruptionBudget":
            found = self.budgets.delete(namespace, name)
        else:
            found = self.storage.delete(kind, namespace, name, now)
        self.changes += found
        return found

    def _pending_in(self, namespace: str) -> list[SimPod]:
        return [p for p in self.by_key.values() if p.namespace == namespace and p.state == PENDING]

    def apply_quota(self, manifest: Mapping[str, Any], now: float) -> None:
        quota = dict(manifest)
        meta = dict(quota.get("metadata") or {})
        meta.setdefault("namespace", DEFAULT_NAMESPACE)
        quota["metadata"] = meta
        name = str(meta["name"])
        try:
            spec = quota_to_spec(quota)
        except ConversionError as err:
            self.note(now, name, "QuotaRefused", str(err))
            return
        try:
            self.scheduler.update_quota(spec, now)
        except ValueError:
            return  # the core reported QuotaRefused with its reasons and kept the old tree
        self.quotas[name] = quota
        self.changes += 1

    def delete_quota(self, name: str, now: float) -> None:
        if name not in self.quotas:
            self.note(now, name, "QuotaNotFound", f"cannot delete ElasticQuota {name}: no such quota")
            return
        try:
            self.scheduler.remove_quota(name, now)
        except ValueError:
            return
        del self.quotas[name]
        self.changes += 1

    def is_parent_quota(self, name: str) -> bool:
        quota = self.quotas.get(name)
        return labels_of(quota).get(LABEL_IS_PARENT) == "true"

    def apply_config(self, source: Any, now: float) -> None:
        try:
            config = load_config(source)
            self.scheduler.update_config(config, now)
        except ConfigError as err:
            self.note(now, "queues.yaml", "ConfigRefused", "; ".join(err.problems))
            return
        for warning in config.warnings:
            self.note(now, "queues.yaml", "ConfigWarning", warning)
        self.changes += 1

    def apply_settings(self, values: Mapping[str, Any], now: float) -> None:
        try:
            settings = parse_settings(values, self.scheduler.settings)
        except SettingsError as err:
            self.note(now, "settings", "SettingsRefused", "; ".join(err.problems))
            return
        self.scheduler.update_settings(settings)
        self.note(now, "settings", "SettingsApplied", ", ".join(f"{k}={v}" for k, v in sorted(values.items())))
        self.changes += 1

    @property
    def scheduler_name(self) -> str:
        return self._scheduler_name

    @property
    def _scheduler_name(self) -> str:
        return self.scheduler.settings.scheduler_name

    # -- pods ----------------------------------------------------------------------------
    def create_pod(
        self, manifest: dict[str, Any], duration: float | None, now: float, replicas: AskMemo | None = None
    ) -> SimPod | None:
        """A pod arrives. `replicas` carries the ask of an earlier copy of the same workload entry
        (the same moment, only name, uid and creation time differ): the copy's ask is made from
        it instead of reading the whole pod again."""
        meta = manifest["metadata"]
        namespace, name, key = str(meta["namespace"]), str(meta["name"]), str(meta["uid"])
        existing = self.pods.get(f"{namespace}/{name}")
        if existing is not None and existing.live:
            self.note(now, f"{namespace}/{name}", "PodRefused", f"pod {namespace}/{name} already exists")
            return None
        class_name = map_at(manifest, "spec").get("priorityClassName")
        if class_name:
            manifest = with_priority_class(manifest, self.priority_classes.get(str(class_name)))
        herder = is_herder_pod(manifest, self._scheduler_name)
        self.storage.pod_created(manifest, now)
        pod = SimPod(key, namespace, name, manifest, herder, now, duration, PENDING if herder else FOREIGN)
        ns = self.namespace(namespace)
        ask = None
        if herder:
            like = replicas.ask if replicas is not None and replicas.namespace is ns else None
            if like is not None and replicas is not None:
                ask = ask_for_sibling(like, manifest) if replicas.siblings else ask_for_copy(like, manifest)
            if ask is None:
                ask = pod_to_ask(manifest, ns, self._scheduler_name, groups=self.groups.get)
            if replicas is not None and like is None:
                replicas.ask, replicas.namespace = ask, ns
        if ask is not None:
            pod.user, pod.application = ask.user.user, ask.application_id
            self._app_pods[ask.application_id] = self._app_pods.get(ask.application_id, 0) + 1
        self.pods[pod.full_name] = pod
        self.by_key[key] = pod
        self.counts[pod.state] += 1
        if ask is None:
            if not self._place_foreign(pod, now):
                self.waiting_foreign.append(pod)
            return pod
        node = manifest["spec"].get("nodeName")
        if node and node not in self.nodes:
            pod.reason = f"created bound to node {node}, which does not exist"
            self.note(now, pod.full_name, "PodRefused", pod.reason)
            return pod
        if node:
            # Created already bound (spec.nodeName): the core takes it as running, as at recovery
            # (a gang's placeholder in a snapshot too: it stays until replaced or released).
            allocation = pod_to_allocation(manifest, ns, self._scheduler_name, groups=self.groups.get)
            pod.placeholder = allocation.placeholder
            self._move(pod, RUNNING, now)
            self._occupy(pod, str(node), allocation.resource, now)
            self.scheduler.add_allocation(allocation, now)
            self._started(pod, self.scheduler.allocation(key), now)
        else:
            self.scheduler.add_ask(ask, now)
        self.changes += 1
        return pod

    def _started(self, pod: SimPod, allocation: Allocation | None, now: float) -> None:
        if allocation is not None:
            pod.queue = allocation.queue_path or None
        pod.quota = self.scheduler.quota_of(pod.key)
        self._on_start(now, pod)

    def _place_foreign(self, pod: SimPod, now: float) -> bool:
        try:
            resource = pod_resource(pod.manifest)
        except ConversionError as err:
            pod.reason = str(err)
            return False
        wanted = pod.manifest["spec"].get("nodeName")
        if wanted:
            if wanted not in self.nodes:
                pod.reason = f"waiting for node {wanted}"
                return False
            node: str | None = str(wanted)
        else:
            node, why = self._first_fit(pod, resource)
            if node is None:
                pod.reason = f"{why} (its scheduler keeps it pending)"
                return False
        assert node is not None
        manifest_before = dict(pod.manifest["spec"])
        self._occupy(pod, node, resource, now)
        try:
            allocation = pod_to_allocation(pod.manifest, self.namespace(pod.namespace), self._scheduler_name)
        except ConversionError as err:
            self._vacate(pod)
            pod.manifest["spec"], pod.node, pod.resource, pod.bound = manifest_before, None, None, None
            pod.reason = str(err)
            return False
        pod.reason = None
        self.scheduler.add_allocation(allocation, now)
        self.changes += 1
        self._on_start(now, pod)
        return True

    def _first_fit(self, pod: SimPod, resource: Resource) -> tuple[str | None, str]:
        """The first node (in the order nodes joined) the pod may run on and has room, or why none."""
        constraints = pod_constraints(pod.manifest)
        mismatches: dict[str, int] = {}
        for name, info in self.infos.items():
            mismatch = static_mismatch(Node(info), constraints)
            if mismatch is None and resource.fits_in(self._room(name)):
                return name, ""
            why = mismatch or "no room"
            mismatches[why] = mismatches.get(why, 0) + 1
        if not mismatches:
            return None, "no nodes"
        counts = ", ".join(f"{n} {why}" for why, n in sorted(mismatches.items()))
        return None, f"no node fits {format_resource(resource)}: {counts}"

    def retry_foreign(self, now: float) -> None:
        """Another scheduler tries its waiting pods again (capacity may have freed)."""
        waiting, self.waiting_foreign = self.waiting_foreign, []
        for pod in waiting:
            if pod.live and not self._place_foreign(pod, now):
                self.waiting_foreign.append(pod)

    def finish(self, pod: SimPod, now: float) -> None:
        """The pod's duration is over: it succeeded and leaves its node."""
        if not pod.live or pod.node is None:
            return
        if pod.state == RUNNING:
            self._move(pod, SUCCEEDED, now)
        pod.finished = now
        pod.manifest["status"]["phase"] = "Succeeded"
        self._vacate(pod)
        self.scheduler.release_allocation(pod.key, now)
        self.changes += 1

    def deadline_exceeded(self, pod: SimPod, now: float) -> None:
        """The pod ran `activeDeadlineSeconds`: the kubelet ends it (phase Failed)."""
        if not pod.live or pod.node is None:
            return
        if pod.state == RUNNING:
            self._move(pod, FAILED, now)
        pod.finished = now
        pod.reason = "DeadlineExceeded: the pod ran its activeDeadlineSeconds"
        pod.manifest["status"].update({"phase": "Failed", "reason": "DeadlineExceeded"})
        self._vacate(pod)
        self.scheduler.release_allocation(pod.key, now)
        self.changes += 1

    def delete_pod(self, pod: SimPod, now: float) -> None:
        if not pod.live:
            return
        if pod in self.waiting_foreign:
            self.waiting_foreign.remove(pod)
        pending = pod.state == PENDING
        waited = self.scheduler.pending_reason(pod.key) if pending else None
        self._gone(pod, now, f"deleted by the scenario at {now:g}s" + (f" while waiting: {waited}" if waited else ""))
        if pending:
            self.scheduler.remove_ask(pod.key, now)
        else:
            self.scheduler.release_allocation(pod.key, now)
        self.changes += 1

    def _gone(self, pod: SimPod, now: float, reason: str) -> None:
        """The pod is deleted (by the scenario, or with its node) before it finished."""
        self._vacate(pod)
        pod.reason = reason
        if pod.state == FOREIGN:
            pod.finished = now
        elif pod.state == PENDING:
            self._move(pod, DELETED, now)
            pod.finished = now
        else:
            self._move(pod, EVICTED, now)
            pod.evicted = now

    def matching_pods(self, namespace: str | None, selector: Mapping[str, str]) -> list[SimPod]:
        return [
            p
            for p in self.by_key.values()
            if p.live and (namespace is None or p.namespace == namespace) and labels_match(p.manifest, selector)
        ]

    def delete_namespace(self, name: str, now: float) -> None:
        if name not in self.namespaces:
            self.note(now, name, "NamespaceNotFound", f"cannot delete namespace {name}: no such namespace")
            return
        for pod in [p for p in self.by_key.values() if p.namespace == name and p.live]:
            self.delete_pod(pod, now)
        quotas = [q for q, obj in self.quotas.items() if obj["metadata"]["namespace"] == name]
        for quota in sorted(quotas, key=self.is_parent_quota):  # leaves before their parents
            self.delete_quota(quota, now)
        del self.namespaces[name]
        self.changes += 1

    # -- the API server's side of the core's decisions --------------------------------------
    def deliver(self, now: float) -> bool:
        """Carry out the binds and evictions the core asked for, in its order; True when any happened.

        The order matters for gang placeholders: a released placeholder has left every tracker at
        once, and the core may place a pod in its room right after (the operator deletes it with
        grace period 0, before that pod's bind)."""
        outputs, self.callbacks.outputs = self.callbacks.outputs, []
        for allocation, reason in outputs:
            if reason is None:
                self._bind(allocation, now)
                continue
            pod = self.by_key.get(allocation.key)
            if pod is None or pod.state != RUNNING:
                continue
            if pod.placeholder:
                self._delete_placeholder(pod, RELEASED, reason, now)
                continue
            refused = self.budgets.evict(pod.namespace, string_labels(pod.manifest), self._live_pods())
            if refused is not None:
                self.note(now, pod.full_name, "EvictionRefused", refused)
                self.scheduler.eviction_failed(pod.key, refused, now)
                self.changes += 1
                continue
            self._vacate(pod)
            self._move(pod, EVICTED, now)
            pod.evicted, pod.reason = now, reason
            pod.manifest["status"]["phase"] = "Failed"
            self.scheduler.release_allocation(pod.key, now)
            self.changes += 1
        failures, self.callbacks.failures = self.callbacks.failures, []
        if not self.scheduler.settings.gang_fail_pods:
            failures = []  # gang.failPodsOnTimeout off: they stay pending with the reason
        for key, why in failures:
            self._fail(key, why, now)
        return bool(outputs or failures)

    def _fail(self, key: str, why: str, now: float) -> None:
        """As the operator does (pods/status): the pod of a Hard gang that timed out is Failed."""
        pod = self.by_key.get(key)
        if pod is None or pod.state != PENDING:
            return
        self._move(pod, FAILED, now)
        pod.finished, pod.reason = now, why
        pod.manifest["status"] = {"phase": "Failed", "reason": TIMEOUT_REASON, "message": why}
        self.scheduler.remove_ask(key, now)
        self.changes += 1

    def _bind(self, allocation: Allocation, now: float) -> None:
        if allocation.placeholder:
            self._create_placeholder(allocation, now)
            return
        replaced = self.by_key.get(allocation.replaces) if allocation.replaces else None
        if replaced is not None and replaced.state == RUNNING:
            self._delete_placeholder(replaced, REPLACED, f"replaced by {allocation.display_name}", now)
        pod = self.by_key.get(allocation.key)
        node = allocation.node_id
        problem = None
        if pod is None or pod.state != PENDING:
            problem = f"pod {allocation.display_name} is not pending"
        elif node not in self.nodes:
            problem = f"node {node} does not exist"
        elif not allocation.resource.fits_in(self._room(node)):
            problem = (
                f"node {node} has {format_resource(self._room(node))} free, the pod needs"
                f" {format_resource(allocation.resource)} (the kubelet would reject it)"
            )
        elif allocation.volume_plan:
            problem = self.storage.carry_out(allocation.volume_plan, self.nodes[node], now)
        if problem is not None:
            self.note(now, allocation.display_name, "BindRefused", problem)
            self.scheduler.release_allocation(allocation.key, now)
            self.changes += 1
            if pod is not None and pod.state == PENDING and allocation.key not in self._refused_binds:
                self._refused_binds.add(allocation.key)
                self.scheduler.add_ask(self.ask_of(pod), now)
            return
        assert pod is not None
        self._move(pod, RUNNING, now)
        self._occupy(pod, node, allocation.resource, now)
        self.changes += 1
        self._started(pod, allocation, now)

    def tell_budgets(self) -> None:
        """Give the core each PodDisruptionBudget's count of pods that may go now, where it changed."""
        now = self.budgets.statuses(self._live_pods())
        if not now and not self._told_budgets:
            return
        for key in self._told_budgets.keys() - now.keys():
            self.scheduler.remove_disruption_budget(*key)
        for key, budget in now.items():
            if self._told_budgets.get(key) != budget:
                self.scheduler.update_disruption_budget(budget)
        self._told_budgets = now

    def _live_pods(self) -> Iterator[tuple[str, Mapping[str, Any], bool]]:
        """(namespace, manifest, running) of every pod not ended, for disruption budgets."""
        for pod in self.by_key.values():
            if pod.live and not pod.placeholder:
                yield pod.namespace, pod.manifest, pod.node is not None and pod.state in (RUNNING, FOREIGN)

    # -- gang placeholders ------------------------------------------------------------------
    def _create_placeholder(self, allocation: Allocation, now: float) -> None:
        ask = allocation.ask
        assert ask is not None and ask.gang is not None
        originator = self.by_key.get(ask.gang.originator)
        node = allocation.node_id
        try:
            if originator is None:
                raise ConversionError(f"its originator pod {ask.gang.originator} is gone")
            manifest = placeholder_manifest(
                originator.manifest, allocation, self.scheduler.settings.placeholder_image, self._scheduler_name
            )
            if node not in self.nodes or not allocation.resource.fits_in(self._room(node)):
                raise ConversionError(f"node {node} cannot take it (the kubelet would reject it)")
        except ConversionError as err:
            self.note(now, allocation.display_name, "PlaceholderRefused", str(err))
            self.scheduler.release_allocation(allocation.key, now)
            self.changes += 1
            return
        namespace, name = allocation.key.split("/", 1)
        manifest["metadata"]["uid"] = allocation.key
        manifest["metadata"]["creationTimestamp"] = rfc3339(now)
        pod = SimPod(allocation.key, namespace, name, manifest, True, now, None, RUNNING, placeholder=True)
        pod.wake_after = ask.gang.timeout
        pod.application, pod.user = None, ask.user.user
        self.pods[pod.full_name] = pod
        self.by_key[pod.key] = pod
        self._occupy(pod, node, allocation.resource, now)
        self.changes += 1
        self._started(pod, allocation, now)

    def _delete_placeholder(self, pod: SimPod, state: str, reason: str, now: float) -> None:
        """The placeholder pod is deleted (the core released it already; its watch event says so)."""
        self._vacate(pod)
        pod.state, pod.reason, pod.finished = state, reason, now
        self.scheduler.release_allocation(pod.key, now)
        self.changes += 1
