"""Room kept for a pending pod (a preemptor's held room) is the node's reservation in YuniKorn's
terms: shown as such, counted as no pod's usage, and open to its own pod only."""

from __future__ import annotations

from tests.core.preemption.test_laws import preempting


def test_room_held_for_a_preemptor_shows_as_the_node_s_reservation_and_is_no_pod_s_usage() -> None:
    world = preempting()  # batch's b3 is being evicted for prod's p0 on n1
    node = world.node_doc("n1")
    assert node["isReserved"] is True and node["reservations"] == ["prod-app|p0"]
    assert node["reservedResource"]["vcore"] == 1000
    assert node["occupied"]["vcore"] == 0 and node["allocated"]["vcore"] == 4000  # b3 still runs
    app = world.app("prod-app")
    assert app["hasReserved"] is True and app["reservations"] == ["n1|p0"]


def test_only_the_pod_room_is_kept_for_may_take_it() -> None:
    world = preempting()
    world.finish("b3")  # the victim is gone: one core free on n1, kept for p0
    assert world.node_doc("n1")["available"]["vcore"] == 1000
    late = world.ask("late", queue="root.batch", app="late-app")
    assert world.sched.node_verdicts(late) == {"n1": "reserved for another pod"}
    assert world.sched.node_verdicts(world.asks["p0"]) == {"n1": None}
