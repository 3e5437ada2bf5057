"""Which ProvisioningRequests exist: one per gang that lacks only nodes, gone when it runs or
leaves or the setting goes off; a failed one stays; an expired booking is asked for again a few
times; a restarted Herder recognises its own requests."""

from __future__ import annotations

from core.gang.spec import TaskGroup
from core.resources import Resource
from core.scale_up import LIMITS, NODES, GangNeed
from shim.autoscaling import (
    ATTEMPTS,
    SCHEDULING_SKIPPED,
    UNSCHEDULABLE,
    RequestState,
    adopted_request,
    condition_reason,
    plan_requests,
    request_manifest,
    request_name,
)

GROUP = TaskGroup("worker", 4, Resource({"vcore": 1000, "pods": 1}))


def need(app: str, waits_for_nodes: bool = True) -> GangNeed:
    return GangNeed(app, "ml", "root.ml", f"ml/{app}-0", ((GROUP, 2),), (f"ml/{app}-0",), waits_for_nodes, "")


def state(app: str, attempt: int = 1, **conditions: str) -> RequestState:
    made = RequestState(app, "ml", request_name("ml", app, attempt), attempt)
    made.read_conditions([{"type": kind, "status": "True", "reason": why} for kind, why in conditions.items()])
    return made


def test_the_condition_says_unschedulable_only_for_pods_that_lack_nodes() -> None:
    assert condition_reason(NODES) == UNSCHEDULABLE
    assert condition_reason(LIMITS) == SCHEDULING_SKIPPED


def test_a_gang_lacking_only_nodes_gets_one_request_and_a_gang_held_back_none() -> None:
    plan = plan_requests([need("a"), need("b", waits_for_nodes=False)], {}, enabled=True)
    assert [(n.application_id, attempt) for n, attempt in plan.create] == [("a", 1)]
    again = plan_requests([need("a")], {"a": state("a")}, enabled=True)
    assert again.create == () and again.delete == ()


def test_a_request_goes_when_its_gang_runs_or_leaves_or_the_setting_is_off() -> None:
    made = {"a": state("a"), "b": state("b")}
    plan = plan_requests([need("b")], made, enabled=True)
    assert [s.application_id for s in plan.delete] == ["a"]
    off = plan_requests([need("b")], made, enabled=False)
    assert sorted(s.application_id for s in off.delete) == ["a", "b"] and off.create == ()


def test_a_failed_request_stays_and_its_gang_says_why() -> None:
    failed = state("a", Failed="CapacityIsNotFound")
    plan = plan_requests([need("a")], {"a": failed}, enabled=True)
    assert plan.create == () and plan.delete == ()
    assert failed.note().endswith("failed: CapacityIsNotFound")


def test_an_expired_booking_is_asked_for_again_then_given_up() -> None:
    expired = state("a", BookingExpired="CapacityReservationTimeExpired")
    plan = plan_requests([need("a")], {"a": expired}, enabled=True)
    assert plan.delete == (expired,) and [attempt for _, attempt in plan.create] == [2]
    last = state("a", attempt=ATTEMPTS, BookingExpired="CapacityReservationTimeExpired")
    assert plan_requests([need("a")], {"a": last}, enabled=True).create == ()
    assert "booking expired" in last.failed


def test_a_restarted_herder_recognises_its_requests_and_their_conditions() -> None:
    name = request_name("ml", "train", 2)
    body = request_manifest("v1", "ml", name, "train", [(f"{name}-worker", 3)])
    body["status"] = {"conditions": [{"type": "Provisioned", "status": "True"}]}
    found = adopted_request(body)
    assert found is not None
    assert (found.application_id, found.attempt, found.templates) == ("train", 2, (f"{name}-worker",))
    assert found.provisioned
    foreign = request_manifest("v1", "ml", "theirs", "train", [])
    foreign["metadata"]["labels"] = {}
    assert adopted_request(foreign) is None


def test_request_names_are_stable_dns_names() -> None:
    name = request_name("ml", "Spark_App.42/x", 1)
    assert name == request_name("ml", "Spark_App.42/x", 1) != request_name("other", "Spark_App.42/x", 1)
    assert name.startswith("herder-spark-app-42-x-") and len(name) < 64
