"""Pods to the core: the one place that decides what a pod's current state means for the scheduler.

`apply(pod)` is idempotent: it takes the pod as the API server last showed it (initial listing,
watch event, replay) and makes the core agree, asking the core what it already knows:

- a pending Herder pod becomes an ask (unless the core placed it and its binding is in flight);
- a Herder pod with `spec.nodeName` is an allocation: one the core made itself (nothing to do),
  or one made elsewhere (by a previous leader, before a restart, by hand), recovered with its ask
  so queues, users, groups and quotas count it exactly;
- a pod of another scheduler on a node is a foreign allocation (counts on its node only);
- a running pod, Herder's or foreign, whose size changed in place (Kubernetes 1.33's resize)
  gets its new size in the core, as kube-scheduler counts it (see shim/convert/pod_size.py);
- a finished or deleted pod is released, which is the only thing that lowers usage.

A Herder pod waits until its namespace is known (the namespace's annotations decide its queue).
A pod naming a PodGroup (or Workload) is read with the group's definition (shim/kube/watch/groups.py,
which also learns each group's pods and their states); while the group does not exist it waits
with that reason, and it is read again when the group comes or changes (`group_changed`).
`apply_all(page)` applies a listing's page: Herder's running pods new to the core go to it
together (`Scheduler.add_allocations`, one hold of its lock), still before any other input the
page gives, so the core ends as if each pod had been applied in turn.
A pod whose binding failed waits a little (doubling, capped) before it is tried again, so a
binding the API server keeps refusing never spins; it stays pending in its application
meanwhile (`Scheduler.binding_failed`), which therefore never looks finished.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.objects.ask import Allocation
from core.resources import Resource
from core.scheduler import Scheduler
from shim.convert.gang_sources import group_ref, no_groups
from shim.convert.gangs.yunikorn import is_placeholder
from shim.convert.identity import is_herder_pod
from shim.convert.namespaces import namespace_problems, namespace_tags
from shim.convert.objects import ConversionError
from shim.convert.pod_size import pod_resource
from shim.convert.pod_view import PodView, as_view, read_pod
from shim.convert.pods import bound_allocation, pod_is_finished, pod_key, pod_node, pod_to_allocation
from shim.convert.rules import string_labels
from shim.convert.sibling_asks import SiblingAsks
from shim.kube.watch.cache import KubeCache
from shim.kube.watch.groups import GroupSync
from shim.kube.write.group_status import BOUND, FAILED, PENDING, RUNNING, SUCCEEDED

log = logging.getLogger("herder.pods")

ASK = "ask"
OWN = "own"
FOREIGN = "foreign"

FIRST_RETRY = 0.5
LAST_RETRY = 30.0


@dataclass(frozen=True, slots=True)
class Known:
    """What the core was last told about a pod."""

    kind: str
    node: str | None = None
    size: Resource | None = None  # a foreign pod's size, to see an in-place resize


def slim(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The pod without managedFields, which can be most of its size and nobody here reads."""
    meta = pod.get("metadata") or {}
    if "managedFields" not in meta:
        return dict(pod)
    return {**pod, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def _namespace_of(pod: Mapping[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("namespace") or "default")


def _name_of(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


class PodSync:
    def __init__(
        self,
        scheduler: Scheduler,
        cache: KubeCache,
        forget_binding: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        retiring: Callable[[str], bool] = lambda key: False,
        groups: GroupSync | None = None,
    ) -> None:
        self._scheduler = scheduler
        self._cache = cache
        self._groups = groups
        self._lookup = groups.lookup if groups is not None else no_groups
        self._forget_binding = forget_binding
        self._retiring = retiring  # gang placeholders the core let go of, their deletion under way
        self._clock = clock
        self._lock = threading.RLock()
        self._siblings = SiblingAsks()  # pods of one template share their ask's reading
        self._recovered: dict[str, Allocation] | None = None  # a page's running pods on their way (`apply_all`)
        self._known: dict[str, Known] = {}
        self._seen: dict[str, float] = {}
        self._waiting: dict[str, set[str]] = {}  # namespace -> pods waiting for it
        self._retry: dict[str, tuple[float, float]] = {}  # pod -> (not before, next delay)
        # Bindings whose outcome is unknown (the response was lost and the pod could not be
        # read): the placement stays and the pod is read again at (when, next delay).
        self._unresolved: dict[str, tuple[float, float]] = {}
        # Bindings the binder gave up on transient errors (5xx, 429, timeouts, dropped
        # connections): the placement stays and, while the server shows the pod pending, the
        # binding is posted again at (when, next delay) (`repost_due`).
        self._transient: set[str] = set()
        self._repost: dict[str, tuple[float, float]] = {}

    @property
    def scheduler_name(self) -> str:
        return self._scheduler.settings.scheduler_name

    def counts(self) -> dict[str, int]:
        with self._lock:
            out = {ASK: 0, OWN: 0, FOREIGN: 0}
            for known in self._known.values():
                out[known.kind] += 1
            out["waiting"] = sum(len(keys) for keys in self._waiting.values())
            return out

    def _core(self) -> Scheduler:
        """The core, once the page's recovered pods are in it (`apply_all`): every input reaches
        it in the order the pods came."""
        recovered = self._recovered
        if recovered:
            self._recovered = {}
            self._scheduler.add_allocations(recovered.values())
        return self._scheduler

    def _allocation(self, key: str) -> Allocation | None:
        """What the core holds for `key`; other pods waiting in the page's batch do not change it."""
        if self._recovered and key in self._recovered:
            return self._core().allocation(key)
        return self._scheduler.allocation(key)

    # -- events ------------------------------------------------------------------------------
    def apply_all(self, pods: Iterable[Mapping[str, Any]]) -> None:
        """`apply` of each pod in turn (a listing's page). Herder's running pods new to the core
        reach it together (`Scheduler.add_allocations`), in their order, before any other input."""
        with self._lock:
            if self._recovered is not None:  # a page's pod led here (a namespace, a group): one batch
                for pod in pods:
                    self.apply(pod)
                return
            self._recovered = {}
            try:
                for pod in pods:
                    self.apply(pod)
            finally:
                self._core()
                self._recovered = None

    def apply(self, pod: Mapping[str, Any]) -> None:
        """The pod as the API server shows it now (listing, ADDED or MODIFIED)."""
        view = read_pod(pod)  # read once; every step below takes the view
        key = pod_key(view)
        with self._lock:
            self._seen[key] = self._clock()
            try:
                self._apply(key, view)
            except ConversionError as error:
                log.warning("pod %s cannot be read, left out: %s", _name_of(pod), error)

    def delete(self, pod: Mapping[str, Any]) -> None:
        key = pod_key(pod)
        with self._lock:
            self._cache.drop_pod(pod)
            self._seen.pop(key, None)
            self._retry.pop(key, None)
            self._unresolved.pop(key, None)
            self._unwait(key, _namespace_of(pod))
            self._release(key)
            if self._groups is not None:
                self._groups.gone(key)
        self._forget_binding(key)

    def _apply(self, key: str, pod: PodView) -> None:
        node = pod.node
        namespace_name = pod.namespace or "default"
        if self._groups is not None:
            self._track_member(key, pod)
        if pod_is_finished(pod) or (node is None and pod.deleting):
            self._cache.drop_pod(pod.raw)
            self._retry.pop(key, None)
            self._unwait(key, namespace_name)
            self._release(key)
            return
        self._cache.put_pod(slim(pod.raw), key)
        if not is_herder_pod(pod, self.scheduler_name):
            if node is not None:
                self._apply_foreign(key, pod, node)
            return
        namespace = self._cache.namespace(namespace_name)
        if namespace is None:
            self._waiting.setdefault(namespace_name, set()).add(key)
            return
        self._unwait(key, namespace_name)
        if node is None:
            self._apply_pending(key, pod, namespace)
        else:
            self._apply_bound(key, pod, node, namespace)

    def _apply_foreign(self, key: str, pod: PodView, node: str) -> None:
        known = self._known.get(key)
        if known is not None and (known.kind, known.node) == (FOREIGN, node):
            size = pod_resource(pod)
            if size != known.size:  # resized in place
                self._core().resize_allocation(key, size)
                self._known[key] = Known(FOREIGN, node, size)
            return
        allocation = pod_to_allocation(
            pod, self._cache.namespace(pod.namespace or "default"), self.scheduler_name, key, self._lookup
        )
        self._release(key)
        self._core().add_allocation(allocation)
        self._known[key] = Known(FOREIGN, node, allocation.resource)

    def _apply_pending(self, key: str, pod: PodView, namespace: Mapping[str, Any]) -> None:
        if self._allocation(key) is not None:
            return  # placed by this core; the binding is on its way
        retry = self._retry.get(key)
        if retry is not None and self._clock() < retry[0]:
            return
        self._core().add_ask(self._siblings.ask(pod, namespace, self.scheduler_name, key, self._lookup))
        self._known[key] = Known(ASK)

    def _apply_bound(self, key: str, pod: PodView, node: str, namespace: Mapping[str, Any]) -> None:
        self._retry.pop(key, None)
        self._unresolved.pop(key, None)  # the server says where it runs
        self._settled(key)
        current = self._allocation(key)
        if current is None and self._retiring(key):
            return  # a placeholder the core released: its DELETED event is on its way
        if current is not None and current.node_id == node:
            self._known[key] = Known(OWN, node)
            size = pod_resource(pod)
            if size != current.resource:  # resized in place
                self._core().resize_allocation(key, size)
            return
        allocation = bound_allocation(pod, self._siblings.ask(pod, namespace, self.scheduler_name, key, self._lookup))
        if current is not None:
            log.warning("pod %s runs on %s, not on %s where Herder placed it", pod.name, node, current.node_id)
            self._core().release_allocation(key)
        if self._recovered is not None:
            self._recovered[key] = allocation  # with the page's others, before anything else reaches the core
        else:
            self._scheduler.add_allocation(allocation)
        self._known[key] = Known(OWN, node)

    def _release(self, key: str) -> None:
        self._settled(key)
        if self._known.pop(key, None) is not None:
            self._core().release_allocation(key)

    def _track_member(self, key: str, pod: PodView) -> None:
        """Tell the groups which of Herder's pods name a group, and in which state each is."""
        assert self._groups is not None
        if not is_herder_pod(pod, self.scheduler_name) or is_placeholder(pod):
            return
        try:
            ref = group_ref(pod)
        except ConversionError:
            ref = None
        if ref is None or (pod.node is None and pod.deleting):
            self._groups.gone(key)
            return
        phase = pod.phase
        if phase in (SUCCEEDED, FAILED):
            state = str(phase)
        elif pod.node is None:
            state = PENDING
        else:
            state = RUNNING if phase == RUNNING else BOUND
        self._groups.member(key, ref, ref.application_id, state)

    def group_changed(self, keys: Iterable[str]) -> None:
        """A group came or changed: its pending pods are read again with its definition."""
        with self._lock:
            for key in keys:
                pod = self._cache.pod(key)
                if pod is not None and pod_node(pod) is None:
                    self.apply(pod)

    def _unwait(self, key: str, namespace: str) -> None:
        waiting = self._waiting.get(namespace)
        if waiting is not None:
            waiting.discard(key)
            if not waiting:
                del self._waiting[namespace]

    # -- namespaces --------------------------------------------------------------------------
    def namespace_changed(self, namespace: Mapping[str, Any]) -> None:
        """A namespace appeared or changed: its waiting pods go on, pending pods take its new tags."""
        name = str((namespace.get("metadata") or {}).get("name") or "")
        with self._lock:
            before = self._cache.namespace(name)
            self._cache.put_namespace(namespace)
            self._core().set_namespace_labels(name, string_labels(namespace))
            changed = before is None or (namespace_tags(before), namespace_problems(before)) != (
                namespace_tags(namespace),
                namespace_problems(namespace),
            )
            if before is not None and changed:
                log.info("namespace %s changed its Herder annotations; its pending pods are asked again", name)
            if not changed:
                return
            for pod in self._cache.pods_in(name):
                if is_herder_pod(pod, self.scheduler_name) and pod_node(pod) is None:
                    self.apply(pod)
            for key in list(self._waiting.get(name, ())):
                waiting = self._cache.pod(key)
                if waiting is not None:
                    self.apply(waiting)

    def namespace_deleted(self, namespace: Mapping[str, Any]) -> None:
        self._cache.drop_namespace(str((namespace.get("metadata") or {}).get("name") or ""))

    # -- bindings that did not land ----------------------------------------------------------
    def binding_given_up(self, key: str, transient: bool) -> None:
        """The binder gave the pod back: after transient errors only (5xx, 429, timeouts, lost
        answers) or on a final one (another 4xx, this replica no longer leading)."""
        with self._lock:
            if transient:
                self._transient.add(key)
            else:
                self._settled(key)

    def binding_failed(self, key: str, fresh: Mapping[str, Any] | None, gone: bool) -> None:
        """The binder gave the pod back; `fresh` is the pod re-read from the API (None if that failed).

        The server's word wins. The core's placement is rolled back only when the server shows
        the pod bound elsewhere or gone, or pending after a final refusal; when the pod could not
        be read (an overloaded server), the placement stays and the pod is read again later
        (`unresolved_due`): a lost response may hide a binding the server committed, and the
        watch's copy may be older than it. A pod the server shows pending after transient errors
        keeps its placement and its binding is posted again after a growing delay
        (`repost_due`): an attempt the server still holds may yet commit (the next one is then
        refused with 409 and the pod read bound there), and an overloaded server never makes
        placements come and go. A pod still pending after a final refusal is asked for again
        after a growing delay (the core holds it pending in its application meanwhile); a bound
        one is recovered where it runs; a deleted one is released.
        """
        with self._lock:
            if gone and fresh is None:
                self._unresolved.pop(key, None)
                self._cache.drop_pod(self._cache.pod(key) or {"metadata": {"uid": key}})
                self._release(key)
                return
            current = self._core().allocation(key)
            if current is not None and fresh is None:
                cached = self._cache.pod(key)
                if cached is not None and pod_node(cached) == current.node_id:
                    self._unresolved.pop(key, None)  # the watch showed it bound there: a binding stays
                    self._settled(key)
                    self._known[key] = Known(OWN, current.node_id)
                    return
                delay = self._back_off(self._unresolved, key)
                log.info("binding of pod %s unresolved; reading it again in %.1fs", key, delay)
                return
            self._unresolved.pop(key, None)
            pod = fresh if fresh is not None else self._cache.pod(key)
            node = pod_node(pod) if pod is not None else None
            if current is not None and node == current.node_id:
                self._settled(key)
                self._known[key] = Known(OWN, node)
                return
            if (
                current is not None
                and key in self._transient
                and pod is not None
                and node is None
                and not pod_is_finished(pod)
                and not as_view(pod).deleting
            ):
                delay = self._back_off(self._repost, key)
                log.info(
                    "binding of %s to %s failed for now; posted again in %.1fs", _name_of(pod), current.node_id, delay
                )
                return
            self._settled(key)
            if pod is not None and node is None:
                if current is not None:
                    delay = self._roll_back(key)
                else:
                    delay = self._back_off(self._retry, key)
                log.info("pod %s will be placed again in %.1fs", _name_of(pod), delay)
                self.apply(pod)  # the fresh copy (finished or deleted meanwhile: released)
                return
            if current is not None:
                self._core().release_allocation(key)
                self._known.pop(key, None)
            if pod is not None:
                self.apply(pod)

    def _back_off(self, table: dict[str, tuple[float, float]], key: str) -> float:
        """The key's next delay in `table` (0.5 s doubling to 30 s), now set as (when, next)."""
        delay = table.get(key, (0.0, FIRST_RETRY))[1]
        table[key] = (self._clock() + delay, min(delay * 2, LAST_RETRY))
        return delay

    def _roll_back(self, key: str) -> float:
        """Undo the core's placement of the pod: pending again in its application, held for the
        back-off it returns, then asked for again (`retry_due`)."""
        delay = self._back_off(self._retry, key)
        self._core().binding_failed(key, delay)
        self._known[key] = Known(ASK)
        return delay

    def _settled(self, key: str) -> None:
        self._transient.discard(key)
        self._repost.pop(key, None)

    def repost_due(self) -> list[tuple[str, str]]:
        """(pod, node) of placements whose binding is due to be posted again (`binding_failed`):
        the core still holds the placement and the watch shows the pod pending."""
        now = self._clock()
        due: list[tuple[str, str]] = []
        with self._lock:
            for key, (when, _) in list(self._repost.items()):
                if when > now:
                    continue
                current = self._core().allocation(key)
                cached = self._cache.pod(key)
                if current is None or cached is None or pod_node(cached) is not None:
                    self._settled(key)  # released, deleted or bound meanwhile
                    continue
                self._repost[key] = (float("inf"), self._repost[key][1])  # until the binder gives it back
                due.append((key, current.node_id))
        return due

    def roll_back_reposts(self) -> int:
        """This replica stopped leading: placements kept for their bindings to be posted again
        are rolled back, each pod pending again for its back-off; how many."""
        with self._lock:
            keys = list(self._repost)
            rolled = 0
            for key in keys:
                self._settled(key)
                cached = self._cache.pod(key)
                if self._core().allocation(key) is None or cached is None or pod_node(cached) is not None:
                    continue
                self._roll_back(key)
                rolled += 1
            self._transient.clear()
            return rolled

    def unresolved_due(self) -> list[str]:
        """Pods whose binding's outcome is unknown and are due to be read again."""
        now = self._clock()
        with self._lock:
            for key in [k for k in self._unresolved if self._core().allocation(k) is None]:
                del self._unresolved[key]  # resolved meanwhile (deleted, released)
            return [key for key, (when, _) in self._unresolved.items() if when <= now]

    def unresolved(self) -> int:
        with self._lock:
            return len(self._unresolved)

    def retry_due(self) -> int:
        """Ask again for pods whose back-off after a failed binding is over."""
        now = self._clock()
        with self._lock:
            due = [key for key, (when, _) in self._retry.items() if when <= now and key not in self._known]
            for key in due:
                pod = self._cache.pod(key)
                if pod is None:
                    self._retry.pop(key, None)
                else:
                    self.apply(pod)
            return len(due)

    # -- ghosts ------------------------------------------------------------------------------
    def reconcile(self, listed: Iterable[Mapping[str, Any]], started: float) -> int:
        """Forget pods missing from a listing begun at `started` that were last seen before it.

        After the pod watch's resourceVersion expired (410 Gone), a pod deleted meanwhile never
        gets a DELETED event; the fresh listing catches it. Pods seen after `started` are newer
        than the listing.
        """
        present = {pod_key(pod) for pod in listed}
        with self._lock:
            ghosts = [key for key, seen in self._seen.items() if key not in present and seen < started]
            for key in ghosts:
                ghost: Mapping[str, Any] = self._cache.pod(key) or {"metadata": {"uid": key}}
                log.info("pod %s is gone without a DELETED event; releasing it", _name_of(ghost))
                self.delete(ghost)
            return len(ghosts)
