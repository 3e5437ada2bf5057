"""The elastic quota manager the scheduler owns: quota tree, pods' requests and usage, admission,
recycling and in-quota preemption behind one lock."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from core.config.settings import Settings
from core.elastic.shares import QuotaTree
from core.elastic.spec import DEFAULT_QUOTA, ROOT_QUOTA, SYSTEM_QUOTA, ElasticQuotaSpec
from core.elastic.validation import validate_pod_labels, validate_quota_change, validate_quota_deletion
from core.elastic.victims import NodeSlot, PreemptionPlan, RunningPod, plan_preemption, recycle_cut
from core.kept import KeptTable
from core.objects.disruption_budget import DisruptionBudget
from core.resources import Resource, format_amounts

__all__ = [
    "ElasticQuotaManager",
    "NodeSlot",
    "PreemptionPlan",
    "QuotaStatus",
    "QuotaValidationError",
    "RunningPod",
    "Victim",
]

REFUSAL_COOLDOWN = 30.0  # seconds a pod whose eviction a PDB refused is passed over


class QuotaValidationError(ValueError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True, slots=True)
class QuotaStatus:
    runtime: Resource
    request: Resource
    used: Resource
    min: Resource
    max: Resource


@dataclass(frozen=True, slots=True)
class Victim:
    key: str
    quota: str
    reason: str


class _Pod(NamedTuple):
    quota: str
    resource: Resource
    preemptible: bool


_PENDING_SHAPES = 64  # request objects counted but not yet summed, before they are summed anyway


class _UsageSum:
    """What a set of running pods uses, kept as they come and go instead of summed on every
    admission: a key is named while any counted pod names it, exactly as a fresh sum would.

    Pods of one shape share one request object (the shim interns them), so a pod that comes or
    goes only moves its request object's count; the counts are summed into the totals when
    they are read. A quota without a max (the default quota, as a rule) is never read while
    pods are placed, so placing one costs a dict update instead of a pass over its resources.
    """

    __slots__ = ("_counts", "_pending", "_values")

    def __init__(self) -> None:
        self._values: dict[str, int] = {}
        self._counts: dict[str, int] = {}
        self._pending: dict[int, list[Any]] = {}  # id of a request -> [the request, pods counted]

    def add(self, resource: Resource, sign: int) -> None:
        entry = self._pending.get(id(resource))
        if entry is not None:
            entry[1] += sign
            return
        if len(self._pending) >= _PENDING_SHAPES:
            self._sum()
        self._pending[id(resource)] = [resource, sign]  # holds the request, so the id stays its own

    def _sum(self) -> None:
        pending, self._pending = self._pending, {}
        counts, values = self._counts, self._values
        for resource, pods in pending.values():
            if not pods:
                continue
            # Counts and totals are sums, so any order ends where adding each pod in turn
            # ends; a key goes when the last step that touches it leaves its count at zero.
            for key, value in resource.items():
                count = counts.get(key, 0) + pods
                if count:
                    counts[key] = count
                    values[key] = values.get(key, 0) + pods * value
                else:
                    del counts[key]
                    del values[key]

    @property
    def values(self) -> dict[str, int]:
        """The totals by resource (nobody may change the dict)."""
        if self._pending:
            self._sum()
        return self._values

    def resource(self) -> Resource:
        return Resource(self.values)


def _sum_of(sums: dict[str, _UsageSum], quota: str) -> _UsageSum:
    found = sums.get(quota)
    if found is None:
        found = sums[quota] = _UsageSum()
    return found


_OUTSIDE_TREE = frozenset((SYSTEM_QUOTA, DEFAULT_QUOTA))
_NO_MAX = Resource()  # read on every admission of a pod of the default quota (a Resource never changes)


class ElasticQuotaManager:
    def __init__(self, settings: Settings | None = None) -> None:
        self._lock = threading.RLock()
        self._settings = settings or Settings()
        self._specs: dict[str, ElasticQuotaSpec] = {}
        self._leaves_in: dict[str, list[str]] | None = None  # leaf quota names by namespace
        self._groups: dict[str, ElasticQuotaSpec] = {}  # objects standing for the system and default groups
        self._tree = QuotaTree(self._settings.min_scaling)
        self._requests: dict[str, _Pod] = {}
        self._shapes: KeptTable[_Pod, _Pod] = KeptTable(4096)  # one _Pod per (quota, request, preemptible)
        self._requested: dict[str, _UsageSum] = {}  # pending and running pods' requests per quota
        self._pod_count: dict[str, int] = {}  # pods (pending or running) per quota, kept as they come and go
        self._running: dict[str, tuple[_Pod, int, float]] = {}  # the pod, its priority and start time
        self._used_by: dict[str, _UsageSum] = {}  # running pods per quota
        self._fixed_by: dict[str, _UsageSum] = {}  # running non-preemptible pods per quota
        self._total = Resource()
        self._foreign = Resource()
        self._pool_stale = False  # the root's pool is worked out when the tree is next read
        self._over_since: dict[str, float] = {}
        self._refused: dict[str, float] = {}

    # -- configuration ------------------------------------------------------------------
    def update_settings(self, settings: Settings) -> None:
        with self._lock:
            self._settings = settings
            if self._tree.min_scaling != settings.min_scaling:
                self._tree.min_scaling = settings.min_scaling
                self._tree.recompute_all()

    def _pods_by_quota(self) -> dict[str, int]:
        return dict(self._pod_count)

    def tree(self) -> tuple[dict[str, ElasticQuotaSpec], dict[str, int]]:
        """The quotas by name and how many pods (pending or running) count against each."""
        with self._lock:
            return dict(self._specs), self._pods_by_quota()

    def update_quota(self, spec: ElasticQuotaSpec) -> None:
        with self._lock:
            problems = validate_quota_change(self._specs, spec)
            if problems:
                raise QuotaValidationError(problems)
            if spec.name in (SYSTEM_QUOTA, DEFAULT_QUOTA):
                self._groups[spec.name] = spec
                return
            self._specs[spec.name] = spec
            self._leaves_in = None
            self._tree.rebuild(self._specs.values())

    def remove_quota(self, name: str) -> None:
        with self._lock:
            problems = validate_quota_deletion(self._specs, name, self._pods_by_quota())
            if problems:
                raise QuotaValidationError(problems)
            self._specs.pop(name, None)
            self._leaves_in = None
            self._tree.rebuild(self._specs.values())

    # -- membership ---------------------------------------------------------------------
    def resolve(self, namespace: str, label: str | None) -> str:
        with self._lock:
            if namespace in self._settings.system_namespaces:
                return SYSTEM_QUOTA
            if label:
                return label if label in self._specs else DEFAULT_QUOTA
            leaves = self._leaves_in
            if leaves is None:  # by namespace, kept until a quota changes: every pod asks
                leaves = self._leaves_in = {}
                for spec in self._specs.values():
                    if not spec.is_parent:
                        leaves.setdefault(spec.namespace, []).append(spec.name)
            here = leaves.get(namespace, [])
            if namespace in here:
                return namespace
            return here[0] if len(here) == 1 else DEFAULT_QUOTA

    def pod_problem(self, namespace: str, label: str | None) -> str | None:
        with self._lock:
            if namespace in self._settings.system_namespaces:
                return None
            problems = validate_pod_labels(self._specs, label, None, True)
            return problems[0] if problems else None

    # -- inputs -------------------------------------------------------------------------
    def set_cluster_total(self, total: Resource) -> None:
        with self._lock:
            self._total = total
            self._pool_stale = True

    def set_foreign_used(self, used: Resource) -> None:
        with self._lock:
            self._foreign = used
            self._pool_stale = True

    def _fresh_tree(self) -> QuotaTree:
        """The quota tree with its runtimes up to date. The root's pool is the cluster total minus
        what foreign pods and the quotas outside the tree use, never below zero; it changes with
        every default-quota pod, so it is worked out here, when runtimes are read, not per pod."""
        if self._pool_stale:
            self._pool_stale = False
            pool = self._total.to_dict()
            outside = [self._used_by[name].values for name in _OUTSIDE_TREE if name in self._used_by]
            for taken in (self._foreign, *outside):
                for key, value in taken.items():
                    pool[key] = pool.get(key, 0) - value
            self._tree.set_pool({key: max(value, 0) for key, value in pool.items()})
        return self._tree

    def _in_tree(self, quota: str) -> bool:
        return quota in self._specs

    def add_request(self, key: str, quota: str, resource: Resource, preemptible: bool) -> None:
        with self._lock:
            if key in self._requests:
                self.remove_request(key)
            # The request is counted by the shape's object, which `remove_request` takes off
            # again: an equal request of another object would be counted apart and removed
            # from the shape's, leaving one count below zero and the other above.
            pod = self._requests[key] = self._shape(quota, resource, preemptible)
            self._pod_count[quota] = self._pod_count.get(quota, 0) + 1
            _sum_of(self._requested, quota).add(pod.resource, 1)
            if self._in_tree(quota):
                # with the root's pool current, a pod's request changes only its own path's
                # runtimes where every sibling already had its request (shares.py)
                self._fresh_tree().add_pod_request(quota, pod.resource, 1)

    def _shape(self, quota: str, resource: Resource, preemptible: bool) -> _Pod:
        return self._shapes.shared(_Pod(quota, resource, preemptible))

    def remove_request(self, key: str) -> None:
        with self._lock:
            pod = self._requests.pop(key, None)
            if pod is not None:
                left = self._pod_count.get(pod.quota, 0) - 1
                if left > 0:
                    self._pod_count[pod.quota] = left
                else:
                    self._pod_count.pop(pod.quota, None)
                self._requested[pod.quota].add(pod.resource, -1)
            if pod is not None and self._in_tree(pod.quota):
                self._fresh_tree().add_pod_request(pod.quota, pod.resource, -1)

    def allocate(
        self, key: str, quota: str, resource: Resource, preemptible: bool, priority: int, start_time: float
    ) -> None:
        with self._lock:
            pod = self._requests.get(key)  # its request, as a rule
            if pod is None or pod.quota != quota or pod.resource is not resource or pod.preemptible != preemptible:
                pod = self._shape(quota, resource, preemptible)
            previous = self._running.get(key)
            if previous is not None:
                self._count_running(previous[0], -1)
            self._running[key] = (pod, priority, start_time)
            self._count_running(pod, 1)
            if quota in _OUTSIDE_TREE or (previous is not None and previous[0].quota in _OUTSIDE_TREE):
                self._pool_stale = True

    def release(self, key: str) -> None:
        with self._lock:
            entry = self._running.pop(key, None)
            self._refused.pop(key, None)
            if entry is not None:
                self._count_running(entry[0], -1)
                if entry[0].quota in (SYSTEM_QUOTA, DEFAULT_QUOTA):
                    self._pool_stale = True

    def _count_running(self, pod: _Pod, sign: int) -> None:
        quota, resource = pod.quota, pod.resource
        _sum_of(self._used_by, quota).add(resource, sign)
        if not pod.preemptible:
            _sum_of(self._fixed_by, quota).add(resource, sign)

    # -- reading ------------------------------------------------------------------------
    def _max(self, quota: str) -> Resource:
        if quota == DEFAULT_QUOTA:
            group = self._groups.get(DEFAULT_QUOTA)
            if group is not None and group.max:
                return group.max  # the object's max wins over quota.defaultMax
            return self._settings.default_max or _NO_MAX
        spec = self._specs.get(quota)
        return spec.max if spec else _NO_MAX

    def max_of(self, quota: str) -> Resource:
        """A quota's max (the default quota's from the settings; empty: no max)."""
        with self._lock:
            return self._max(quota)

    def runtime(self, name: str) -> Resource:
        with self._lock:
            if name in (SYSTEM_QUOTA, DEFAULT_QUOTA):
                return self._max(name)
            node = self._fresh_tree().nodes.get(name)
            return Resource(node.runtime) if node else Resource()

    def _used(self, quota: str, only_non_preemptible: bool = False) -> Resource:
        sums = (self._fixed_by if only_non_preemptible else self._used_by).get(quota)
        return sums.resource() if sums is not None else Resource()

    def _subtree_used(self, name: str) -> Resource:
        used = Resource()
        stack = [name]
        while stack:  # quota trees are as deep as users make them: no recursion
            current = stack.pop()
            used = used + self._used(current)
            stack.extend(self._tree.nodes[current].children)
        return used

    def _ancestors(self, quota: str) -> list[str]:
        """The parent quotas above `quota`, nearest first (the root excluded)."""
        found: list[str] = []
        parent = self._tree.parent_of(quota) if quota in self._tree.nodes else None
        while parent is not None and parent != ROOT_QUOTA and parent not in found:
            found.append(parent)
            parent = self._tree.parent_of(parent)
        return found

    def _parent_refusal(self, quota: str, resource: Resource, by_runtime: bool) -> str | None:
        """Why admitting `resource` to `quota` would take a parent past its max, or with
        `by_runtime` first past its runtime (Koordinator's EnableCheckParentQuota checks every
        ancestor's runtime). A child admitted against its own runtime while a sibling still
        borrows, or while a child stands above a max lowered under it (the parent's runtime
        counts each child's request only up to its max), would otherwise push their parent past
        it until the recycler caught up (caller holds the lock)."""
        tree = self._fresh_tree() if by_runtime else None
        for parent in self._ancestors(quota):
            spec = self._specs.get(parent)
            if spec is None:
                continue
            used = self._subtree_used(parent)
            node = tree.nodes.get(parent) if tree is not None else None
            runtime = Resource(node.runtime) if node is not None else None
            for key in sorted(spec.max):
                asked = resource.get_value(key)
                if not asked:
                    continue
                held = used.get_value(key)
                if runtime is not None and held + asked > runtime.get_value(key):
                    shown = format_amounts(key, held, asked, runtime.get_value(key))
                    return (
                        f"parent quota {parent} would exceed its runtime: {key} {shown[0]} used"
                        f" + {shown[1]} asked > {shown[2]} runtime"
                    )
                if held + asked > spec.max.get_value(key):
                    shown = format_amounts(key, held, asked, spec.max.get_value(key))
                    return (
                        f"parent quota {parent} would exceed its max: {key} {shown[0]} used + {shown[1]} asked"
                        f" > {shown[2]} max (waiting for its other children to give back what they borrowed)"
                    )
        return None

    def check_admission(self, quota: str, resource: Resource, preemptible: bool) -> str | None:
        with self._lock:
            spec = self._specs.get(quota)
            if spec is not None and spec.is_parent:
                return f"quota {quota} is a parent quota; pods belong to its leaves"
            maximum = self._max(quota)
            if spec is None and not maximum:
                return None  # the default or system quota with no max: no runtime, no min, no parent
            keys = list(maximum)
            used = self._used(quota).masked(keys)
            runtime = self.runtime(quota)
            for key in sorted(keys):
                asked = resource.get_value(key)
                if asked and used.get_value(key) + asked > runtime.get_value(key):
                    figures = [used.get_value(key), asked, runtime.get_value(key)]
                    if spec is not None:
                        figures += [spec.min.get_value(key), spec.max.get_value(key)]
                    shown = format_amounts(key, *figures)
                    bounds = f" (min {shown[3]}, max {shown[4]})" if spec is not None else ""
                    return (
                        f"quota {quota} would exceed its runtime: {key} {shown[0]} used"
                        f" + {shown[1]} asked > {shown[2]} runtime{bounds}"
                    )
            return self._beyond_runtime(quota, spec, resource, keys, preemptible, by_runtime=True)

    def ceiling_refusal(self, quota: str, resource: Resource, preemptible: bool) -> str | None:
        """Why `resource` more would take the quota past what it may hold however large the
        cluster grows: its max (its min for a resource its shared weight gives 0: it never
        borrows), a parent's max, the min for non-preemptible pods. None when at most its
        runtime (its share of the cluster, which grows with the cluster) stands in the way."""
        with self._lock:
            spec = self._specs.get(quota)
            if spec is not None and spec.is_parent:
                return f"quota {quota} is a parent quota; pods belong to its leaves"
            maximum = self._max(quota)
            used = self._used(quota)
            for key in sorted(maximum):
                cap = maximum.get_value(key)
                if spec is not None and spec.shared_weight is not None and spec.shared_weight.get_value(key) <= 0:
                    cap = min(cap, spec.min.get_value(key))
                asked = resource.get_value(key)
                if asked and used.get_value(key) + asked > cap:
                    held, more, ceiling = format_amounts(key, used.get_value(key), asked, cap)
                    return f"quota {quota} would exceed its max: {key} {held} used + {more} asked > {ceiling}"
            return self._beyond_runtime(quota, spec, resource, list(maximum), preemptible)

    def _beyond_runtime(
        self,
        quota: str,
        spec: ElasticQuotaSpec | None,
        resource: Resource,
        keys: list[str],
        preemptible: bool,
        by_runtime: bool = False,
    ) -> str | None:
        """What else refuses `resource` more in the quota: a parent's max (and with `by_runtime`
        its runtime: admission now, not the ceiling however the cluster grows), and for a
        non-preemptible pod its min (caller holds the lock)."""
        if self._settings.check_parent_quota:
            refusal = self._parent_refusal(quota, resource, by_runtime)
            if refusal is not None:
                return refusal
        if not preemptible and spec is not None:
            fixed = self._used(quota, only_non_preemptible=True)
            for key in sorted(keys):
                asked = resource.get_value(key)
                if asked and fixed.get_value(key) + asked > spec.min.get_value(key):
                    held, more, least = format_amounts(key, fixed.get_value(key), asked, spec.min.get_value(key))
                    return (
                        f"quota {quota}: non-preemptible pods may use only its min: {key}"
                        f" {held} used + {more} asked > {least} min"
                    )
        return None

    def status(self) -> dict[str, QuotaStatus]:
        with self._lock:
            result = {}
            for name in [*sorted(self._specs), SYSTEM_QUOTA, DEFAULT_QUOTA]:
                spec = self._specs.get(name) or self._groups.get(name)
                node = self._tree.nodes.get(name)
                used = self._subtree_used(name) if node else self._used(name)
                request = Resource(node.request) if node else self._request_sum(name)
                keys = list(self._max(name))
                result[name] = QuotaStatus(
                    runtime=self.runtime(name),
                    request=request.masked(keys) if keys else request,
                    used=used.masked(keys) if keys else used,
                    min=spec.min if spec else Resource(),
                    max=self._max(name),
                )
            return result

    def _request_sum(self, quota: str) -> Resource:
        sums = self._requested.get(quota)
        return sums.resource() if sums is not None else Resource()

    def documents(self) -> list[dict[str, object]]:
        with self._lock:
            statuses = self.status()

            def document(name: str) -> dict[str, object]:
                spec = self._specs.get(name) or self._groups.get(name) or ElasticQuotaSpec(name)
                status = statuses[name]
                weight = spec.shared_weight if spec.shared_weight is not None else spec.max
                return {
                    "name": name,
                    "namespace": spec.namespace,
                    "parent": spec.parent,
                    "isParent": spec.is_parent,
                    "min": spec.min.to_dict(),
                    "max": status.max.to_dict(),
                    "sharedWeight": weight.to_dict(),
                    "allowLentResource": spec.allow_lent_resource,
                    "request": status.request.to_dict(),
                    "used": status.used.to_dict(),
                    "runtime": status.runtime.to_dict(),
                    "children": [],
                }

            docs = {name: document(name) for name in statuses}
            for name, doc in docs.items():  # linked, not built recursively: chains can be long
                node = self._tree.nodes.get(name)
                doc["children"] = [docs[child] for child in (node.children if node else []) if child in docs]
            top = self._tree.nodes[ROOT_QUOTA].children
            return [docs[name] for name in top if name in docs] + [docs[SYSTEM_QUOTA], docs[DEFAULT_QUOTA]]

    # -- taking back --------------------------------------------------------------------
    def recycle(self, now: float) -> list[Victim]:
        with self._lock:
            if not self._settings.recycle_enabled:
                return []
            victims: list[Victim] = []
            for name in sorted(self._specs):
                if self._specs[name].is_parent:
                    continue
                runtime = self.runtime(name)
                used = self._used(name)
                over = [k for k in runtime if used.get_value(k) > runtime[k]]
                if not over:
                    self._over_since.pop(name, None)
                    continue
                since = self._over_since.setdefault(name, now)
                if now - since < self._settings.recycle_delay:
                    continue
                pods = [
                    RunningPod(key, pod.resource, priority, start_time, pod.preemptible)
                    for key, (pod, priority, start_time) in self._running.items()
                    if pod.quota == name and now - self._refused.get(key, -REFUSAL_COOLDOWN) >= REFUSAL_COOLDOWN
                ]
                summary = ", ".join(
                    "{} {} used > {} runtime".format(k, *format_amounts(k, used[k], runtime[k])) for k in over
                )
                for pod in recycle_cut(used, runtime, pods):
                    victims.append(Victim(pod.key, name, f"quota {name} above its runtime: {summary}"))
            return victims

    def recently_refused(self, key: str, now: float) -> bool:
        """Whether a PodDisruptionBudget refused the pod's eviction lately (every evictor passes it over)."""
        with self._lock:
            return key in self._refused and now - self._refused[key] < REFUSAL_COOLDOWN

    def eviction_refused(self, key: str, now: float) -> None:
        with self._lock:
            self._refused[key] = now

    def preemption_plan(
        self,
        quota: str,
        resource: Resource,
        priority: int,
        nodes: Mapping[str, NodeSlot],
        preemptible: bool = True,
        budgets: Sequence[DisruptionBudget] = (),
    ) -> PreemptionPlan | None:
        with self._lock:
            spec = self._specs.get(quota)
            if spec is None:
                return None
            if not preemptible:
                # Only preemptible pods can go, so non-preemptible usage never drops: a pod refused
                # for passing the min would still be refused after the evictions.
                fixed = self._used(quota, only_non_preemptible=True)
                for key in spec.max:
                    asked = resource.get_value(key)
                    if asked and fixed.get_value(key) + asked > spec.min.get_value(key):
                        return None
            runtime = self.runtime(quota)
            return plan_preemption(self._used(quota), runtime, resource, priority, nodes, budgets)
