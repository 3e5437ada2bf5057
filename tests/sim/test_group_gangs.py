"""The PodGroup APIs through `herder simulate`: for each API a gang that fits runs whole, a gang
one pod short of its minimum starts none and holds no room from others, and a pod naming a
group that does not exist yet waits, naming it, until the group is applied."""

from __future__ import annotations

from typing import Any

import pytest

from tests.gang_apis import APIS, VOLCANO, GangApi
from tests.sim.scenarios import node, pod, simulate


def members(
    api: GangApi, group: str, count: int, *, at: float = 0, cpu: str = "1", duration: float = 100
) -> dict[str, Any]:
    """`count` pods of the group (one workload entry), as the API's controller would make them."""
    keys = api.member(group)
    return pod(
        f"{group}-worker",
        namespace="ml",
        at=at,
        count=count,
        cpu=cpu,
        duration=duration,
        labels=keys.get("labels"),
        annotations=keys.get("annotations"),
        **keys.get("spec", {}),
    )


@pytest.mark.parametrize("api", APIS, ids=lambda api: api.name)
def test_a_gang_that_fits_runs_whole_at_once(api: GangApi) -> None:
    report = simulate(
        {
            "nodes": [node(count=2, cpu="2")],
            "objects": [api.group("ml", "train", 4)],
            "workload": [members(api, "train", 3), members(api, "train", 1, at=5)],
        }
    )
    pods = report["pods"]
    bound = [pods[f"ml/train-worker-{i}"]["bound"] for i in range(3)] + [pods["ml/train-worker"]["bound"]]
    assert bound == [5, 5, 5, 5], "none runs before the fourth pod exists; then all four at once"
    placeholders = [p for p in pods.values() if p.get("placeholder")]
    assert len(placeholders) == 4 and {p["state"] for p in placeholders} == {"Replaced"}
    app = next(a for a in report["state"]["applications"] if a["applicationID"] == api.application("ml", "train"))
    assert app["minMembers"] == 4 and f"{api.kind} ml/train" in app["gangSource"]


@pytest.mark.parametrize("api", APIS, ids=lambda api: api.name)
def test_a_gang_one_pod_short_starts_none_and_holds_no_room_from_others(api: GangApi) -> None:
    report = simulate(
        {
            "nodes": [node(count=2, cpu="2")],
            "objects": [api.group("ml", "train", 4)],
            "workload": [
                members(api, "train", 3),
                pod("other", namespace="ml", at=1, count=2, cpu="2", duration=10, labels={"applicationId": "other"}),
            ],
            "until": 60,
        }
    )
    pods = report["pods"]
    assert all(pods[f"ml/train-worker-{i}"]["bound"] is None for i in range(3))
    assert [pods[f"ml/other-{i}"]["bound"] for i in range(2)] == [1, 1], "the short gang held none of the room"
    assert not [p for p in pods.values() if p.get("placeholder")]
    reason = pods["ml/train-worker-0"]["reason"]
    assert "needs 4 pods before any is placed: 3 exist" in reason and "ml/train" in reason


@pytest.mark.parametrize("api", APIS, ids=lambda api: api.name)
def test_a_pod_naming_a_group_not_there_yet_waits_naming_it_and_runs_once_it_is_applied(api: GangApi) -> None:
    report = simulate(
        {
            "nodes": [node(cpu="8")],
            "workload": [members(api, "train", 2)],
            "events": [{"at": 30, "action": "apply", "object": api.group("ml", "train", 2)}],
            "snapshots": [10],
        }
    )
    pods = report["pods"]
    assert [pods[f"ml/train-worker-{i}"]["bound"] for i in range(2)] == [30, 30]
    waiting = [
        r["pendingReason"]
        for a in report["snapshots"]["10"]["applications"]
        for r in a.get("requests", [])
        if r.get("pendingReason")
    ]
    pending_words = [e["message"] for e in report["events"] if e["reason"] == "Unschedulable"]
    said = f"waits for {api.kind} ml/train"
    assert any(said in words for words in waiting + pending_words), pending_words


def test_volcano_waits_for_each_tasks_minimum() -> None:
    ps = {"annotations": {"scheduling.k8s.io/group-name": "tf", "volcano.sh/task-spec": "ps"}}
    group = VOLCANO.group("ml", "tf", 3)
    group["spec"]["minTaskMember"] = {"ps": 1}
    report = simulate(
        {
            "nodes": [node(cpu="8")],
            "objects": [group],
            "workload": [
                members(VOLCANO, "tf", 3),
                pod("tf-ps", namespace="ml", at=20, duration=100, annotations=ps["annotations"]),
            ],
        }
    )
    pods = report["pods"]
    assert pods["ml/tf-ps"]["bound"] == 20
    assert [pods[f"ml/tf-worker-{i}"]["bound"] for i in range(3)] == [20, 20, 20]


@pytest.mark.parametrize("api", APIS, ids=lambda api: api.name)
def test_a_billion_member_group_is_refused_at_once_and_other_pods_run(api: GangApi) -> None:
    report = simulate(
        {
            "nodes": [node(cpu="4")],
            "objects": [api.group("ml", "huge", 1_000_000_000)],
            "workload": [
                members(api, "huge", 2),
                pod("plain", namespace="ml", count=3, duration=10, labels={"applicationId": "plain"}),
            ],
        }
    )
    pods = report["pods"]
    assert pods["ml/huge-worker-0"]["state"] == "Pending"
    assert pods["ml/huge-worker-0"]["reason"] == (
        "the gang has 1000000000 members in all, above the setting gang.maxMembers (10000)"
    )
    assert report["summary"]["placeholders"] == 0
    assert all(pods[f"ml/plain-{i}"]["state"] == "Succeeded" for i in range(3))
