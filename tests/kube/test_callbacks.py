"""The operator's callbacks hand the core's decisions to the binder and evictor without blocking."""

from __future__ import annotations

import threading

from core.events import SchedulingEvent
from core.objects.ask import Allocation
from core.resources import Resource
from shim.kube.write.binder import Binder, BindPolicy
from shim.kube.write.callbacks import ShimCallbacks
from shim.kube.write.evictor import Evictor

PODS = {"uid-1": ("team", "web-1")}


def test_a_placed_pod_is_bound_once_and_an_eviction_reaches_the_api() -> None:
    posts: list[tuple[str, ...]] = []
    lock = threading.Lock()

    def record(*call: str) -> None:
        with lock:
            posts.append(call)

    binder = Binder(record, PODS.get, lambda _: None, BindPolicy(workers=2))
    evictor = Evictor(lambda ns, name: record("evict", ns, name), PODS.get, lambda k, r: None)
    callbacks = ShimCallbacks(binder, evictor)
    allocation = Allocation(key="uid-1", node_id="node-1", resource=Resource({"cpu": 1000}))
    callbacks.bind(allocation)
    callbacks.bind(allocation)
    binder.shutdown()
    callbacks.evict(allocation, "quota reclaim")
    evictor.shutdown()
    assert posts == [("team", "web-1", "node-1", "uid-1"), ("evict", "team", "web-1")]


def test_events_beyond_the_backlog_are_counted_not_blocking() -> None:
    binder = Binder(lambda *a: None, PODS.get, lambda _: None)
    evictor = Evictor(lambda *a: None, PODS.get, lambda k, r: None)
    callbacks = ShimCallbacks(binder, evictor, event_backlog=2)
    for i in range(5):
        callbacks.report(SchedulingEvent(float(i), "REQUEST", "uid-1", "Scheduled", "ok"))
    assert callbacks.events.qsize() == 2
    assert callbacks.events_dropped == 3
    binder.shutdown()
    evictor.shutdown()
