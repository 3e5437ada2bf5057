"""The operator's callbacks hand the core's decisions to the binder and evictor without blocking."""

from __future__ import annotations

import threading
import time

from core.events import SchedulingEvent
from core.objects.ask import Allocation, Ask
from core.resources import Resource
from shim.kube.write.binder import Binder, BindPolicy
from shim.kube.write.callbacks import ShimCallbacks
from shim.kube.write.evictor import Evictor
from shim.kube.write.placeholders import PlaceholderWriter

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


def test_a_pod_placed_where_a_placeholder_was_released_is_bound_after_the_placeholder_is_gone() -> None:
    """A real pod larger than its placeholder releases it and may take its room in the same
    cycle: the binding must wait for the placeholder's deletion, or the kubelet sees both."""
    order: list[str] = []
    lock = threading.Lock()
    deleting = threading.Event()

    def delete_pod(namespace: str, name: str) -> None:
        deleting.wait(5)
        with lock:
            order.append(f"delete {name}")

    def post(*call: str) -> None:
        with lock:
            order.append(f"bind {call[1]}")

    pods = {"uid-1": ("team", "web-1"), "uid-2": ("team", "web-2")}
    binder = Binder(post, pods.get, lambda _: None, BindPolicy(workers=2))
    placeholders = PlaceholderWriter(
        lambda ns, body: None,
        delete_pod,
        lambda key: None,
        lambda: ("pause", "herder"),
        lambda key: None,
        binder.submit,
    )
    callbacks = ShimCallbacks(binder, Evictor(post, pods.get, lambda k, r: None), placeholders=placeholders)
    stand_in = Ask(key="team/tg-x", application_id="x", resource=Resource({"vcore": 1000}), placeholder=True)
    held = Allocation(key="team/tg-x", node_id="node-1", resource=stand_in.resource, ask=stand_in)
    callbacks.evict(held, "its real pod is larger")
    callbacks.bind(Allocation(key="uid-1", node_id="node-1", resource=Resource({"vcore": 2000})))
    callbacks.bind(Allocation(key="uid-2", node_id="node-2", resource=Resource({"vcore": 2000})))
    time.sleep(0.3)
    with lock:
        assert order == ["bind web-2"], "only the bind to another node may go before the deletion"
    deleting.set()
    placeholders.shutdown()
    binder.shutdown()
    assert order == ["bind web-2", "delete tg-x", "bind web-1"]
