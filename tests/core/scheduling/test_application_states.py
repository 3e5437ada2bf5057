"""The application state machine (seed 000) as the scheduler drives it."""

from __future__ import annotations

from core.scheduler import COMPLETING_TIMEOUT
from tests.core.scheduling.world import World

ONE_QUEUE = """
partitions:
  - name: default
    queues: [{name: root, submitacl: '*', queues: [{name: q}]}]
"""


def test_an_application_goes_from_new_to_completed() -> None:
    world = World(ONE_QUEUE)
    world.pod("p0", queue="root.q", app="job")
    world.pod("p1", queue="root.q", app="job")
    assert world.app_state("job") == "Accepted"
    world.node("n1", cpu=1, memory="1Gi", pods=1)
    world.schedule()
    assert world.app_state("job") == "Starting"  # one pod runs, one still waits
    world.node("n2", cpu=1, memory="1Gi", pods=1)
    world.schedule()
    assert world.app_state("job") == "Running"
    world.finish("p0")
    assert world.app_state("job") == "Running"
    world.finish("p1")
    assert world.app_state("job") == "Completing"
    world.schedule(advance=COMPLETING_TIMEOUT - 1)
    assert world.app_state("job") == "Completing"
    world.schedule(advance=1)
    doc = world.app("job")
    assert doc["applicationState"] == "Completed"
    assert doc["finishedTime"] == COMPLETING_TIMEOUT * 10**9  # Unix nanoseconds of the virtual clock
    assert [entry["applicationState"] for entry in doc["stateLog"]] == [
        "Accepted",
        "Starting",
        "Running",
        "Completing",
        "Completed",
    ]
    assert doc["stateLog"][-1]["time"] == doc["finishedTime"]


def test_a_single_pod_application_runs_at_once() -> None:
    world = World(ONE_QUEUE)
    world.node("n1")
    world.pod("p0", queue="root.q", app="job")
    world.schedule()
    assert world.app_state("job") == "Running"


def test_a_completing_application_runs_again_when_a_pod_comes() -> None:
    world = World(ONE_QUEUE)
    world.node("n1")
    world.pod("p0", queue="root.q", app="job")
    world.schedule()
    world.finish("p0")
    assert world.app_state("job") == "Completing"
    world.pod("p1", queue="root.q", app="job")
    assert world.app_state("job") == "Running"
    world.schedule()
    assert world.node_of("p1") == "n1"
    assert world.app_state("job") == "Running"


def test_a_starting_application_whose_waiting_pods_are_withdrawn_is_running() -> None:
    world = World(ONE_QUEUE)
    world.node("n1", cpu=1, memory="1Gi", pods=1)
    world.pod("p0", queue="root.q", app="job")
    world.pod("p1", queue="root.q", app="job")
    world.schedule()
    assert world.app_state("job") == "Starting"
    world.sched.remove_ask("p1")
    assert world.app_state("job") == "Running"


def test_an_application_whose_only_pod_is_withdrawn_completes() -> None:
    world = World(ONE_QUEUE)
    world.pod("p0", queue="root.q", app="job")
    world.sched.remove_ask("p0")
    assert world.app_state("job") == "Completing"
    assert world.queue("root.q")["pendingResource"] == {}
    world.schedule(advance=COMPLETING_TIMEOUT)
    assert world.app_state("job") == "Completed"


def test_a_completed_application_id_can_be_used_again() -> None:
    world = World(ONE_QUEUE)
    world.node("n1")
    world.pod("p0", queue="root.q", app="job")
    world.schedule()
    world.finish("p0")
    world.schedule(advance=COMPLETING_TIMEOUT)
    world.pod("p1", queue="root.q", app="job")
    assert world.schedule() == {"p1": "n1"}
    states = [d["applicationState"] for d in world.sched.applications_document() if d["applicationID"] == "job"]
    assert sorted(states) == ["Completed", "Running"]


def test_an_application_whose_bindings_did_not_land_stays_running_while_its_pods_wait() -> None:
    """Three pods placed, their bindings timed out and the server shows them pending: they are
    pending again in their application at once, held for the shim's back-off, then placed again.
    The application showed Completing with no allocation while its three pods waited."""
    world = World(ONE_QUEUE)
    world.node("n1", cpu=4)
    world.pods(3, queue="root.q", app="job")
    assert set(world.schedule()) == {"p0", "p1", "p2"}
    for key in ("p0", "p1", "p2"):
        world.sched.binding_failed(key, retry_after=5)
    doc = world.app("job")
    assert doc["applicationState"] == "Running" and doc["allocations"] == []
    assert sorted(r["allocationKey"] for r in doc["requests"]) == ["p0", "p1", "p2"]
    assert world.allocated("root.q") == {}  # every tracker rolled back
    assert "did not land; tried again in 5s" in (world.reason("p0") or "")
    assert world.sched.pending_by_rule() == {"bind-retry": 3}
    assert world.schedule(advance=4) == {}  # the back-off holds them
    assert set(world.schedule(advance=1)) == {"p0", "p1", "p2"}
    states = [entry["applicationState"] for entry in world.app("job")["stateLog"]]
    assert "Completing" not in states


def test_a_pod_deleted_during_its_binding_back_off_lets_the_application_complete() -> None:
    world = World(ONE_QUEUE)
    world.node("n1", cpu=4)
    world.pod("p0", queue="root.q", app="job")
    world.schedule()
    world.sched.binding_failed("p0", retry_after=5)
    world.sched.remove_ask("p0")
    assert world.app_state("job") == "Completing"
    assert world.schedule(advance=10) == {}
