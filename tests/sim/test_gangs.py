"""The simulator plays the shim's part for gangs: placeholder pods in the report, replaced,
released on timeout; the gangs example shows what its comments say."""

from __future__ import annotations

import json
from typing import Any

from shim.sim.summary import human_summary
from tests.sim.scenarios import node, pod, simulate, simulate_example

GROUPS = json.dumps([{"name": "w", "minMember": 3, "minResource": {"cpu": "1", "memory": "1Gi"}}])


def gang(name: str, count: int, *, at: float = 0, duration: float = 60, policy: str = "", **kw: Any) -> dict[str, Any]:
    annotations = {"yunikorn.apache.org/task-group-name": "w", "yunikorn.apache.org/task-groups": GROUPS}
    if policy:
        annotations["yunikorn.apache.org/schedulingPolicyParameters"] = policy
    return pod(
        name, at=at, count=count, duration=duration, labels={"applicationId": name}, annotations=annotations, **kw
    )


def placeholders(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: entry for name, entry in report["pods"].items() if entry.get("placeholder")}


def test_placeholders_appear_in_the_report_and_are_replaced_on_their_nodes() -> None:
    report = simulate({"nodes": [node(cpu="2", count=2)], "workload": [gang("job", 3)]})
    held = placeholders(report)
    assert len(held) == 3 and all(name.startswith("default/tg-job-w-") for name in held)
    assert all(entry["state"] == "Replaced" for entry in held.values())
    replaced_by = {entry["reason"].removeprefix("replaced by "): entry["node"] for entry in held.values()}
    for i in range(3):
        real = report["pods"][f"default/job-{i}"]
        assert real["state"] == "Succeeded" and replaced_by[f"default/job-{i}"] == real["node"]
    assert report["summary"]["pods"] == 3 and report["summary"]["placeholders"] == 3


def test_soft_timeout_in_the_simulator_falls_back_to_normal_scheduling() -> None:
    report = simulate(
        {
            "nodes": [node(cpu="3")],
            "workload": [
                pod("busy", scheduler=None),  # another scheduler's pod: 2 cores stay free for the gang of 3
                gang("job", 3, policy="placeholderTimeoutInSeconds=20", duration=30),
            ],
        }
    )
    held = placeholders(report)
    assert sorted(entry["state"] for entry in held.values()) == ["Released", "Released"]
    bound = sorted(report["pods"][f"default/job-{i}"]["bound"] for i in range(3))
    assert bound == [20, 20, 50]  # two run at the timeout, the third when one ends


def test_the_gangs_example_runs_one_gang_after_the_other_and_fails_the_hard_one() -> None:
    report = simulate_example("gangs.yaml")
    pods = report["pods"]
    assert [pods[f"ml/train-a-worker-{i}"]["bound"] for i in range(4)] == [0, 0, 0, 0]
    assert [pods[f"ml/train-b-worker-{i}"]["bound"] for i in range(4)] == [60, 60, 60, 60]
    assert all(pods[f"ml/mpi-c-worker-{i}"]["bound"] is None for i in range(6))
    failed = [e for e in report["events"] if e["objectID"] == "mpi-c" and e["reason"] == "Failed"]
    assert len(failed) == 1 and failed[0]["timestamp"] == 90
    assert "ResourceReservationTimeout" in failed[0]["message"]
    workers = [pods[f"ml/mpi-c-worker-{i}"] for i in range(6)]
    assert {(w["state"], w["finished"]) for w in workers} == {("Failed", 90)}, "failed as YuniKorn's shim fails them"
    assert all("ResourceReservationTimeout" in w["reason"] for w in workers)
    assert report["summary"]["failed"] == 6
    assert pods["ml/notebook"]["bound"] == 90
    states = sorted(entry["state"] for entry in placeholders(report).values())
    assert states == ["Released"] * 2 + ["Replaced"] * 8


def test_bad_gang_input_keeps_the_pods_waiting_with_the_problem_named_and_others_run() -> None:
    # A malformed scheduling policy parameter is no such input: YuniKorn's shim reads it as its
    # default, and so does Herder, naming it in a warning (AnnotationIgnored).
    def broken(name: str, annotations: dict[str, str]) -> dict[str, Any]:
        return pod(name, duration=10, labels={"applicationId": name}, annotations=annotations)

    report = simulate(
        {
            "nodes": [node(cpu="8")],
            "workload": [
                broken("bad-json", {"yunikorn.apache.org/task-groups": "[{name: w"}),
                broken(
                    "bad-timeout",
                    {
                        "yunikorn.apache.org/task-groups": GROUPS,
                        "yunikorn.apache.org/schedulingPolicyParameters": "placeholderTimeoutInSeconds=ten",
                    },
                ),
                gang("good", 3, duration=10),
                pod(
                    "stray",
                    duration=10,
                    labels={"applicationId": "good"},
                    annotations={"yunikorn.apache.org/task-group-name": "driver"},
                ),
                pod("plain", duration=10),
            ],
            "until": 100,
        }
    )
    pods = report["pods"]
    assert pods["default/bad-json"]["state"] == "Pending"
    assert "yunikorn.apache.org/task-groups: not JSON" in pods["default/bad-json"]["reason"]
    assert pods["default/bad-timeout"]["state"] == "Succeeded"  # its gang ran with the default timeout
    [ignored] = [e for e in report["events"] if e["reason"] == "AnnotationIgnored"]
    assert ignored["name"] == "default/bad-timeout"
    assert (
        "placeholderTimeoutInSeconds must be whole seconds, got 'ten'; the default (900 s) applies"
        in (ignored["message"])
    )
    assert "1 AnnotationIgnored" in human_summary(report)  # "Events worth a look"
    assert pods["default/stray"]["state"] == "Pending"
    assert "names task group 'driver', which application good does not define" in pods["default/stray"]["reason"]
    assert [pods[f"default/good-{i}"]["state"] for i in range(3)] == ["Succeeded"] * 3
    assert pods["default/plain"]["state"] == "Succeeded"
    named = [
        e["message"] for e in report["events"] if e["reason"] == "Unschedulable" and e.get("name") == "default/stray"
    ]
    assert named and "driver" in named[0]


def test_a_real_pod_too_large_for_its_placeholder_takes_the_room_it_let_go() -> None:
    """Three placeholders (a core each) and another pod fill the node; each real pod asks more
    memory than its group reserved, so the core lets its placeholder go and places the pod
    normally, in the room just freed. The simulated API server deletes the placeholder first, as
    the core asked, so the kubelet takes the pod (it used to refuse the bind)."""
    other = pod("other", cpu="1", memory="1Gi")
    real = gang("job", 3, duration=30, memory="2Gi")
    report = simulate({"nodes": [node(cpu="4")], "workload": [other, real]})
    assert not [e for e in report["events"] if e["reason"] == "BindRefused"]
    assert [report["pods"][f"default/job-{i}"]["bound"] for i in range(3)] == [0, 0, 0]
    assert sorted(entry["state"] for entry in placeholders(report).values()) == ["Released"] * 3


def test_a_billion_member_gang_is_refused_at_once_and_other_pods_run() -> None:
    groups = json.dumps([{"name": "w", "minMember": 1_000_000_000, "minResource": {"cpu": "1"}}])
    annotations = {"yunikorn.apache.org/task-group-name": "w", "yunikorn.apache.org/task-groups": groups}
    report = simulate(
        {
            "nodes": [node(cpu="4", count=2)],
            "workload": [
                pod("huge", labels={"applicationId": "huge"}, annotations=annotations),
                pod("plain", count=3, duration=10, labels={"applicationId": "plain"}),
            ],
        }
    )
    huge = report["pods"]["default/huge"]
    assert huge["state"] == "Pending"
    assert huge["reason"] == "the gang has 1000000000 members in all, above the setting gang.maxMembers (10000)"
    assert report["summary"]["placeholders"] == 0
    assert all(report["pods"][f"default/plain-{i}"]["state"] == "Succeeded" for i in range(3))


def test_a_gang_larger_than_the_cluster_holds_nothing_and_runs_once_a_node_joins() -> None:
    report = simulate(
        {
            "nodes": [node(cpu="2")],
            "workload": [gang("job", 3, duration=30), pod("plain", at=1, duration=5, labels={"applicationId": "p"})],
            "events": [
                {
                    "at": 20,
                    "action": "add-node",
                    "node": {"name": "extra", "allocatable": {"cpu": "2", "memory": "8Gi"}},
                }
            ],
        }
    )
    pods = report["pods"]
    assert pods["default/plain"]["bound"] == 1  # the gang held no room meanwhile
    assert [pods[f"default/job-{i}"]["bound"] for i in range(3)] == [20, 20, 20]
    waited = [e["message"] for e in report["events"] if e["objectID"] == "default/job-0"]
    assert (
        "the gang's placeholders need vcore 3000m in all, above what the whole cluster has (2000m):"
        " no placeholder is placed until nodes are added"
    ) in waited


def test_with_fail_pods_off_a_hard_gangs_pods_stay_pending_with_the_reason() -> None:
    report = simulate_example("gangs.yaml", {"gang.failPodsOnTimeout": "false"})
    workers = [report["pods"][f"ml/mpi-c-worker-{i}"] for i in range(6)]
    assert {w["state"] for w in workers} == {"Pending"}
    assert all("ResourceReservationTimeout" in w["reason"] for w in workers)
    assert report["summary"]["failed"] == 0
