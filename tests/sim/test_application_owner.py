"""An application belongs to one namespace and one user: another user's pod never joins it.

Application IDs are visible to anyone who can read the REST API, so a pod carrying someone
else's ID must not run in their queue, count as theirs, or escape its own user's limits.
"""

from __future__ import annotations

import json
from typing import Any

from tests.sim.scenarios import namespace_queues, pod, simulate

USER_INFO = "yunikorn.apache.org/user.info"
APP_ID = "yunikorn.apache.org/app-id"

CONFIG = namespace_queues(limits=[{"limit": "carol", "users": ["carol"], "maxresources": {"vcore": 1}}])


def owned(name: str, user: str, namespace: str, app: str = "alice-job", **extra: Any) -> dict[str, Any]:
    annotations = {USER_INFO: json.dumps({"user": user})}
    return pod(name, namespace=namespace, labels={APP_ID: app}, annotations=annotations, **extra)


def test_another_users_pod_with_the_same_application_id_waits_with_a_reason() -> None:
    report = simulate(
        {
            "config": CONFIG,
            "nodes": [{"name": "worker", "allocatable": {"cpu": "8", "memory": "32Gi"}}],
            "workload": [
                owned("alice-0", "alice", "team"),
                *(owned(f"carol-{index}", "carol", "team", at=1) for index in range(3)),
            ],
            "until": 10,
        }
    )
    assert report["pods"]["team/alice-0"]["state"] == "Running"
    for index in range(3):
        carol = report["pods"][f"team/carol-{index}"]
        assert carol["state"] == "Pending"
        assert "application alice-job belongs to user alice" in carol["reason"]
    apps = {app["applicationID"]: app for app in report["state"]["applications"]}
    assert apps["alice-job"]["user"] == "alice"
    assert len(apps["alice-job"]["allocations"]) == 1  # none of carol's pods counted as alice's
    users = {usage["userName"]: usage for usage in report["state"]["usage"]["users"]}
    assert "carol" not in users or not users["carol"]["queues"]["resourceUsage"].get("vcore")


def test_a_pod_of_another_namespace_never_joins_the_application() -> None:
    report = simulate(
        {
            "config": CONFIG,
            "nodes": [{"name": "worker", "allocatable": {"cpu": "8", "memory": "32Gi"}}],
            "workload": [owned("alice-0", "alice", "team"), owned("alice-1", "alice", "other", at=1)],
            "until": 10,
        }
    )
    stray = report["pods"]["other/alice-1"]
    assert stray["state"] == "Pending"
    assert "application alice-job belongs to namespace team" in stray["reason"]


def test_once_the_owners_application_ends_the_waiting_pod_forms_its_own_under_its_own_limits() -> None:
    report = simulate(
        {
            "config": CONFIG,
            "nodes": [{"name": "worker", "allocatable": {"cpu": "8", "memory": "32Gi"}}],
            "workload": [
                owned("alice-0", "alice", "team", duration=5),
                owned("carol-0", "carol", "team", at=1),
                owned("carol-1", "carol", "team", at=1),
            ],
            "until": 120,
        }
    )
    states = sorted(report["pods"][f"team/carol-{i}"]["state"] for i in range(2))
    assert states == ["Pending", "Running"]  # carol's own 1-vcore limit holds: one runs, one waits
    assert report["pods"]["team/carol-0"]["user"] == "carol"
