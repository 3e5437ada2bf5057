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
