"""The status writers: what Herder writes back to the cluster so people see what it decided.

- ElasticQuota `status.used` and the `runtime`/`request` annotations (shim/kube/write/quota_status.py);
- pods' `PodScheduled=False` condition with the reason they wait (shim/kube/write/pod_status.py);
- Kubernetes Events for scheduled, waiting, evicted and preempted pods, correlated and rate
  limited, held back while bindings are queued (shim/kube/write/pod_events.py), and for gangs
  on their group objects;
- gangs' ProvisioningRequests, when `autoscaling.provisioningRequests` is on
  (shim/kube/write/provisioning.py);
- the status of the PodGroup APIs' groups (shim/kube/write/group_status.py);
- `Failed` on the pods of a Hard gang that timed out (shim/kube/write/pod_failure.py).

`StatusWriters` runs them in one thread: every `tick` seconds it drains the core's scheduling
events (ShimCallbacks.events) into the pod writers, then lets each writer do what its own rate
limit allows (`status.interval` for quota status and pod conditions, the event token bucket for
Events). Only the leader writes: while `active()` is false the events are drained and dropped.
The API calls are those of shim/kube/write/status_api.py, all declared in shim/kube/permissions.py.

The operator starts it with `start_status_writers(operator)` (shim/kube/extensions.py) and stops
it with `.stop()`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from core.events import SchedulingEvent
from core.scale_up import ScaleUpView
from shim.kube.write.group_status import GroupStatusWriter
from shim.kube.write.pod_events import EventCorrelator, EventWriter
from shim.kube.write.pod_failure import PodFailureWriter
from shim.kube.write.pod_status import PodConditionWriter
from shim.kube.write.provisioning import ProvisioningWriter
from shim.kube.write.provisioning_api import ProvisioningApi
from shim.kube.write.quota_status import QuotaStatusWriter
from shim.kube.write.status_api import StatusApi

log = logging.getLogger("herder.status")

VIEW_SHARE = 0.1  # of the time the writers may spend working out which pods lack only nodes

__all__ = ["StatusWriters", "start_status_writers"]


class StatusWriters:
    def __init__(
        self,
        events: queue.Queue[SchedulingEvent],
        quotas: QuotaStatusWriter,
        pods: PodConditionWriter,
        pod_events: EventWriter,
        active: Callable[[], bool] = lambda: True,
        provisioning: ProvisioningWriter | None = None,
        tick: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
        groups: GroupStatusWriter | None = None,
        failures: PodFailureWriter | None = None,
    ) -> None:
        self._events = events
        self.quotas = quotas
        self.pods = pods
        self.pod_events = pod_events
        self.provisioning = provisioning
        self.groups = groups
        self.failures = failures
        self._active = active
        self._tick = tick
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self, now: float | None = None) -> None:
        """One round: take the queued scheduling events, then write what is due."""
        now = self._clock() if now is None else now
        active = self._active()
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            if active:
                self.pods.observe(event)
                self.pod_events.observe(event, now)
                if self.failures is not None:
                    self.failures.observe(event)
        if not active:
            return
        writes: list[Callable[[float], int]] = [self.quotas.tick, self.pods.tick, self.pod_events.flush]
        if self.provisioning is not None:
            writes.append(self.provisioning.tick)
        if self.failures is not None:
            writes.append(self.failures.tick)
        if self.groups is not None:
            writes.append(self.groups.tick)
        for write in writes:
            if not self._active():  # the Lease may have gone during the round (a paused process)
                return
            try:
                write(now)
            except Exception:  # a writer's bug must not end the thread; the next round retries
                log.exception("status writer %s failed", getattr(write, "__qualname__", write))

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="herder-status", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(self._tick):
            self.run_once()


def start_status_writers(op: Any) -> StatusWriters:
    """Build and start the writers for a running HerderOperator (its api_client, scheduler, cache,
    groups, callbacks.events, status.leader and identity)."""
    api = StatusApi(op.api_client)
    scheduler = op.scheduler

    def interval() -> float:
        return float(scheduler.settings.status_interval)

    def namespaces() -> dict[str, str]:
        specs, _ = scheduler.quota_tree()
        return {name: spec.namespace for name, spec in specs.items() if spec.namespace}

    correlator = EventCorrelator(component=scheduler.settings.scheduler_name, instance=str(op.identity))

    def view() -> ScaleUpView:  # at most a tenth of the time, under the lock, on a big backlog
        found: ScaleUpView = scheduler.scale_up_view(busy_share=VIEW_SHARE)
        return found

    provisioning = ProvisioningWriter(
        ProvisioningApi(op.api_client), view, op.cache.pod, lambda: scheduler.settings, interval
    )
    writers = StatusWriters(
        op.callbacks.events,
        QuotaStatusWriter(api, scheduler.quota_status, namespaces, interval),
        PodConditionWriter(api, op.cache.pod, view, interval, notes=provisioning.notes),
        EventWriter(
            api,
            op.cache.locate,
            correlator,
            active=op.may_write,
            group_of=op.groups.group_of,
            busy=lambda: op.binder.queued() > 0,  # Events wait while bindings are queued
        ),
        active=op.may_write,
        provisioning=provisioning,
        groups=GroupStatusWriter(api, op.groups.states, scheduler.pending_reason, interval),
        failures=PodFailureWriter(api, op.cache.pod, lambda: scheduler.settings.gang_fail_pods, interval),
    )
    writers.start()
    log.info("status writers started (quota status, pod conditions, Events)")
    return writers
