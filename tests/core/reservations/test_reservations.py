"""Reservations as a user relies on them: the pod at the front of its line gets a node kept for
it once it has waited `reservation.delay`; only pods ahead of it, pods that fit beside it and
backfills that end in time use that node meanwhile; the reservation ends when the pod runs or
leaves or the node can no longer hold it."""

from __future__ import annotations

from typing import Any

from core.config.settings import Settings
from core.objects.ask import Allocation
from core.objects.constraints import Taint, Toleration
from core.objects.node_info import NodeInfo
from tests.core.scheduling.world import World, queues_config, res

QUEUES = queues_config("- name: batch\n- name: urgent\n")


def world(**settings: Any) -> World:
    return World(QUEUES, settings=Settings(**settings))


def running(w: World, name: str, node: str, cpu: float = 1, deadline: float | None = None, **kw: Any) -> None:
    """A pod already on `node` since now (the kubelet ends it `deadline` seconds after it started)."""
    ask = w.ask(name, queue="root.batch", app=kw.pop("app", "filler"), cpu=cpu, **kw)._replace(active_deadline=deadline)
    w.asks[name] = ask
    w.sched.add_allocation(Allocation.for_ask(ask, node, w.now))


def pod(w: World, name: str, deadline: float | None = None, **kw: Any) -> None:
    kw.setdefault("queue", "root.batch")
    kw.setdefault("app", name)
    ask = w.ask(name, **kw)._replace(active_deadline=deadline)
    w.asks[name] = ask
    w.sched.add_ask(ask)


def full_pair(w: World, deadline: float | None = None) -> None:
    """Two 4-core nodes, each full with four 1-core pods (a0..a3 on n1, b0..b3 on n2)."""
    w.node("n1", cpu=4)
    w.node("n2", cpu=4)
    for i in range(4):
        running(w, f"a{i}", "n1", deadline=deadline)
        running(w, f"b{i}", "n2", deadline=deadline)


def reserved(w: World) -> dict[str, list[str]]:
    return {n["nodeID"]: n["reservations"] for n in w.sched.nodes_document() if n["isReserved"]}


def test_the_front_pod_reserves_a_node_once_it_has_waited_the_delay_and_small_pods_go_elsewhere() -> None:
    w = world()
    full_pair(w)
    pod(w, "big", cpu=4)
    w.schedule(advance=1)
    assert reserved(w) == {}  # 1 s of the 2 s delay
    assert w.sched.reservation_due() == 2.0
    w.schedule(advance=1)
    assert reserved(w) == {"n1": ["big|big"]}
    assert w.out.reasons("Reserved")[0].message.startswith("node n1 reserved for it")
    w.finish("a0")
    pod(w, "small", cpu=1)
    assert w.schedule() == {}  # n1's free core is kept for big
    assert "reserved for another pod" in (w.reason("small") or "")
    w.finish("b0")
    assert w.schedule() == {"small": "n2"}
    w.finish("a1", "a2")
    assert w.schedule() == {}
    assert "node n1 is reserved for it" in (w.reason("big") or "")
    w.finish("a3")
    assert w.schedule() == {"big": "n1"}
    assert reserved(w) == {}


def test_without_reservations_the_small_pod_takes_the_freed_core() -> None:
    w = world(reservation_enabled=False)
    full_pair(w)
    pod(w, "big", cpu=4)
    w.schedule(advance=5)
    w.finish("a0")
    pod(w, "small", cpu=1)
    assert w.schedule() == {"small": "n1"}
    assert reserved(w) == {}


def test_the_delay_is_a_setting() -> None:
    w = world(reservation_delay=10.0)
    full_pair(w)
    pod(w, "big", cpu=4)
    w.schedule(advance=5)
    assert reserved(w) == {}
    w.schedule(advance=5)
    assert reserved(w) == {"n1": ["big|big"]}


def test_the_node_where_the_pod_can_start_soonest_is_reserved() -> None:
    w = world()
    w.node("n1", cpu=4)
    w.node("n2", cpu=4)
    for i in range(4):
        running(w, f"a{i}", "n1")  # no deadline: may run forever
        running(w, f"b{i}", "n2", deadline=60)  # gone by t=60 at the latest
    pod(w, "big", cpu=4)
    w.schedule(advance=2)
    assert reserved(w) == {"n2": ["big|big"]}
    assert "by about t+58 s" in w.out.reasons("Reserved")[0].message


def test_a_pod_that_leaves_what_the_reserved_pod_waits_for_alone_still_runs_there() -> None:
    gpu = Taint("gpu", "", "NoSchedule")
    tolerate = (Toleration(key="gpu", operator="Exists"),)
    w = world()
    w.node("g1", cpu=16, gpu=1, taints=[gpu])
    running(w, "trainer", "g1", cpu=2, gpu=1, tolerations=tolerate)
    pod(w, "next-trainer", cpu=2, gpu=1, tolerations=tolerate)
    w.schedule(advance=2)
    assert reserved(w) == {"g1": ["next-trainer|next-trainer"]}
    pod(w, "cpu-job", cpu=8, tolerations=tolerate)  # fits beside: 14 cores free, 2 kept
    assert w.schedule() == {"cpu-job": "g1"}
    pod(w, "too-big", cpu=6, tolerations=tolerate)  # 6 free, 2 of them kept for next-trainer
    assert w.schedule() == {}


def test_a_backfill_that_ends_before_the_reserved_pod_can_start_uses_the_node() -> None:
    w = world()
    full_pair(w, deadline=100)  # every running pod ends by t=100
    pod(w, "big", cpu=4)
    w.schedule(advance=2)
    assert reserved(w) == {"n1": ["big|big"]}
    w.finish("a0")
    pod(w, "too-long", cpu=1, deadline=99)  # would end at t=101 > 100
    pod(w, "short", cpu=1, deadline=60)  # ends by t=62
    assert w.schedule() == {"short": "n1"}
    backfill = w.out.reasons("Backfilled")[0]
    assert backfill.object_id == "short" and "reserved for default/big" in backfill.message
    assert w.node_of("too-long") is None
    running_doc = w.sched.reservations_document()[0]
    assert running_doc["nodeID"] == "n1" and running_doc["freesInSeconds"] == 98.0


def test_no_backfill_where_the_pods_that_must_leave_have_no_deadline() -> None:
    w = world()
    full_pair(w)  # no deadlines: no start can be promised
    pod(w, "big", cpu=4)
    w.schedule(advance=2)
    w.finish("a0")
    pod(w, "short", cpu=1, deadline=5)
    assert w.schedule() == {}


def test_backfill_is_a_setting() -> None:
    w = world(reservation_backfill=False)
    full_pair(w, deadline=100)
    pod(w, "big", cpu=4)
    w.schedule(advance=2)
    w.finish("a0")
    pod(w, "short", cpu=1, deadline=5)
    assert w.schedule() == {}


def test_a_pod_ahead_in_line_may_use_a_reserved_node() -> None:
    w = world()
    full_pair(w)
    pod(w, "big", cpu=4)
    w.schedule(advance=2)
    assert reserved(w) == {"n1": ["big|big"]}
    w.finish("a0")
    pod(w, "important", cpu=1, priority=100)  # ahead of big in root.batch's line
    assert w.schedule() == {"important": "n1"}
    assert reserved(w) == {"n1": ["big|big"]}  # big keeps its place: it waits longer, as it would anyway


def test_the_reservation_ends_when_its_pod_runs_elsewhere() -> None:
    w = world()
    full_pair(w)
    pod(w, "big", cpu=4)
    w.schedule(advance=2)
    w.finish("b0", "b1", "b2", "b3")
    assert w.schedule() == {"big": "n2"}
    assert reserved(w) == {}
    w.finish("a0")
    pod(w, "small", cpu=1)
    assert w.schedule() == {"small": "n1"}


def test_the_reservation_ends_when_its_pod_is_deleted() -> None:
    w = world()
    full_pair(w)
    pod(w, "big", cpu=4)
    w.schedule(advance=2)
    w.finish("a0")
    w.sched.remove_ask("big")
    assert reserved(w) == {}
    pod(w, "small", cpu=1)
    assert w.schedule() == {"small": "n1"}
    assert w.app("big")["reservations"] == []


def test_the_reservation_ends_when_its_node_can_no_longer_hold_the_pod() -> None:
    for change in ("remove", "cordon", "relabel", "shrink"):
        w = world()
        full_pair(w)
        pod(w, "big", cpu=4, selector={"pool": "a"})
        w.sched.update_node(NodeInfo("n1", res(4, "16Gi", 110), {"pool": "a"}))
        w.schedule(advance=2)
        assert reserved(w) == {"n1": ["big|big"]}, change
        if change == "remove":
            w.sched.remove_node("n1")
        elif change == "cordon":
            w.sched.update_node(NodeInfo("n1", res(4, "16Gi", 110), {"pool": "a"}, schedulable=False))
        elif change == "relabel":
            w.sched.update_node(NodeInfo("n1", res(4, "16Gi", 110), {"pool": "b"}))
        else:
            w.sched.update_node(NodeInfo("n1", res(2, "16Gi", 110), {"pool": "a"}))
        assert reserved(w) == {}, change
        ended = w.out.reasons("ReservationEnded")
        assert ended and "node n1" in ended[-1].message, change
        w.schedule(advance=5)  # nothing to reserve now: no other node suits big
        assert reserved(w) == {}, change


def test_rest_documents_show_reservations_as_yunikorn_does() -> None:
    w = world()
    full_pair(w)
    pod(w, "big", cpu=4, app="job-1")
    w.schedule(advance=2)
    node = w.node_doc("n1")
    assert node["isReserved"] is True and node["reservations"] == ["job-1|big"]
    assert node["reservedResource"]["vcore"] == 4000
    assert node["available"]["vcore"] == 0  # YuniKorn's available: kept room is no pod's
    app = w.app("job-1")
    assert app["hasReserved"] is True and app["reservations"] == ["n1|big"]
    assert w.node_doc("n2")["isReserved"] is False
    explained = w.sched.explain("big")
    assert explained is not None and explained["reservation"]["nodeID"] == "n1"
    assert w.sched.reservation_counts()["reserved"]["vcore"] == 4000


def test_only_the_front_of_a_line_reserves() -> None:
    w = world()
    full_pair(w)
    pod(w, "big", cpu=4)
    w.now = 1
    pod(w, "second", cpu=4)  # behind big in root.batch's fifo line
    w.schedule(advance=5)
    assert reserved(w) == {"n1": ["big|big"]}


def test_each_queue_s_front_reserves_its_own_node() -> None:
    w = world()
    full_pair(w)
    pod(w, "big", cpu=4)
    pod(w, "other", cpu=4, queue="root.urgent")
    w.schedule(advance=2)
    assert sorted(reserved(w).values()) == [["big|big"], ["other|other"]]
