"""What Herder writes on a gang's group object: scheduler-plugins' phase and counts, Volcano's
phase, Kubernetes' scheduling condition; each written only when it changes, a bounded number
of groups a pass, never over what the object already shows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from shim.kube.write.group_status import (
    BOUND,
    FAILED,
    PENDING,
    RUNNING,
    SUCCEEDED,
    GroupState,
    GroupStatusWriter,
    coscheduling_status,
    volcano_status,
    wanted_status,
)


def states(**counts: int) -> Counter[str]:
    names = {"pending": PENDING, "bound": BOUND, "running": RUNNING, "succeeded": SUCCEEDED, "failed": FAILED}
    return Counter({names[key]: value for key, value in counts.items()})


@pytest.mark.parametrize(
    ("counts", "phase"),
    [
        ({"pending": 2}, "Pending"),
        ({"pending": 4}, "PreScheduling"),
        ({"pending": 2, "bound": 2}, "Scheduling"),
        ({"bound": 4}, "Scheduled"),
        ({"running": 3, "bound": 1}, "Scheduled"),
        ({"running": 4}, "Running"),
        ({"running": 2, "succeeded": 2}, "Running"),
        ({"succeeded": 4}, "Finished"),
        ({"running": 3, "failed": 1}, "Failed"),
    ],
)
def test_scheduler_plugins_phase_follows_its_controllers_words(counts: dict[str, int], phase: str) -> None:
    status = coscheduling_status(4, states(**counts))
    assert status["phase"] == phase
    assert status["scheduled"] == sum(v for k, v in counts.items() if k != "pending")


@pytest.mark.parametrize(
    ("counts", "phase"),
    [({}, "Inqueue"), ({"pending": 4}, "Inqueue"), ({"running": 2}, "Running"), ({"succeeded": 2}, "Completed")],
)
def test_volcano_is_inqueue_until_its_minimum_runs(counts: dict[str, int], phase: str) -> None:
    assert volcano_status(2, states(**counts))["phase"] == phase


def group(api: str, version: str, minimum: int, members: Mapping[str, str], status: Any = None) -> GroupState:
    obj: dict[str, Any] = {"metadata": {"name": "train", "namespace": "ml", "generation": 3}}
    if status is not None:
        obj["status"] = status
    return GroupState(api, "g", version, "podgroups", obj, minimum, members)


def test_a_kubernetes_pod_group_is_told_why_it_waits_then_that_it_is_scheduled_and_never_back() -> None:
    waiting = group("Kubernetes", "v1alpha2", 2, {"a": PENDING})
    patch = wanted_status(waiting, lambda: "its gang needs 2 pods", lambda: "T1")
    assert patch == {
        "status": {
            "conditions": [
                {
                    "type": "PodGroupScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "its gang needs 2 pods",
                    "lastTransitionTime": "T1",
                    "observedGeneration": 3,
                }
            ]
        }
    }
    scheduled = group("Kubernetes", "v1beta1", 2, {"a": RUNNING, "b": RUNNING})
    patch = wanted_status(scheduled, lambda: None, lambda: "T2")
    assert patch is not None
    [condition] = patch["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "PodGroupInitiallyScheduled",
        "True",
        "Scheduled",
    )
    done = group("Kubernetes", "v1beta1", 2, {"a": PENDING}, {"conditions": [condition]})
    assert wanted_status(done, lambda: "pods went away", lambda: "T3") is None, "True once, True for good"


def test_what_the_object_shows_already_is_not_written_again() -> None:
    shown = coscheduling_status(2, states(running=2))
    assert (
        wanted_status(group("scheduler-plugins", "v1alpha1", 2, {"a": RUNNING, "b": RUNNING}, shown), lambda: None, str)
        is None
    )
    assert wanted_status(group("scheduler-plugins", "v1alpha1", 0, {"a": RUNNING}), lambda: None, str) is None


class Recorder:
    def __init__(self) -> None:
        self.patches: list[tuple[str, dict[str, Any]]] = []

    def patch_group_status(
        self, group: str, version: str, plural: str, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> None:
        self.patches.append((name, dict(patch)))


def test_the_writer_writes_a_change_once_per_interval_and_at_most_per_pass_groups() -> None:
    api = Recorder()
    groups = [
        GroupState("Volcano", "g", "v1beta1", "podgroups", {"metadata": {"name": f"g{i}", "namespace": "ml"}}, 1, {})
        for i in range(5)
    ]
    writer = GroupStatusWriter(api, lambda: groups, lambda key: None, lambda: 1.0, per_pass=3)
    assert writer.tick(0.0) == 3
    assert writer.tick(0.5) == 0  # within the interval
    assert writer.tick(1.0) == 2  # the rest; the first three are not written twice while the watch catches up
    assert writer.tick(2.0) == 0
    assert [name for name, _ in api.patches] == ["g0", "g1", "g2", "g3", "g4"]
    assert api.patches[0][1] == {"status": {"phase": "Inqueue", "running": 0, "succeeded": 0, "failed": 0}}
