"""Bad input inside a valid scenario never stops the run: it becomes a pending reason or an event."""

from __future__ import annotations

from typing import Any

from tests.sim.scenarios import events, find_queue, node, pod, quota, simulate

PROVIDED = {
    "partitions": [
        {
            "name": "default",
            "placementrules": [{"name": "provided"}],
            "queues": [{"name": "root", "submitacl": "*", "queues": [{"name": "a"}]}],
        }
    ]
}


def run(**document: Any) -> dict[str, Any]:
    return simulate({"nodes": [node()], **document})


def test_malformed_pod_quantity_keeps_that_pod_pending_and_the_rest_runs() -> None:
    report = run(workload=[pod("bad", cpu="two"), pod("good")])
    bad = report["pods"]["default/bad"]
    assert bad["state"] == "Pending"
    assert "pod default/bad container 'main' requests" in bad["reason"] and "'two'" in bad["reason"]
    assert report["pods"]["default/good"]["state"] == "Running"


def test_malformed_user_annotation_and_priority_are_pending_reasons() -> None:
    report = run(
        workload=[
            pod("who", annotations={"yunikorn.apache.org/user.info": "{not json"}),
            pod("rank", priority="high"),  # type: ignore[arg-type]
        ]
    )
    assert "annotation yunikorn.apache.org/user.info: not JSON" in report["pods"]["default/who"]["reason"]
    assert "spec.priority: expected an integer" in report["pods"]["default/rank"]["reason"]


def test_unknown_queue_in_a_label_is_a_pending_reason() -> None:
    report = run(config=PROVIDED, workload=[pod("lost", labels={"yunikorn.apache.org/queue": "root.nowhere"})])
    lost = report["pods"]["default/lost"]
    assert lost["state"] == "Pending" and lost["queue"] is None
    assert lost["reason"].startswith("no placement rule matched") and "root.nowhere" in lost["reason"]


def test_invalid_config_in_an_apply_event_is_refused_and_the_old_one_kept() -> None:
    broken = {
        "partitions": [
            {
                "name": "default",
                "queues": [{"name": "root", "queues": [{"name": "a", "resources": {"max": {"vcore": "lots"}}}]}],
            }
        ]
    }
    report = run(
        config=PROVIDED,
        workload=[pod("later", at=20, labels={"yunikorn.apache.org/queue": "root.a"})],
        events=[{"at": 10, "action": "apply", "object": {"config": broken}}],
    )
    refused = events(report, "ConfigRefused")
    assert len(refused) == 1 and refused[0]["timestamp"] == 10 and "lots" in refused[0]["message"]
    assert report["pods"]["default/later"]["state"] == "Running"
    assert find_queue(report["state"], "root.a") is not None


def test_invalid_settings_in_an_apply_event_are_refused_naming_the_key() -> None:
    report = run(events=[{"at": 5, "action": "apply", "object": {"settings": {"quota.recycle.delay": "soon"}}}])
    refused = events(report, "SettingsRefused")
    assert len(refused) == 1 and refused[0]["message"].startswith("quota.recycle.delay:")
    assert report["state"]["config"]["settings"]["quota.recycle.delay"] == 120.0


def test_node_with_a_malformed_quantity_is_left_out_with_an_event() -> None:
    report = simulate({"nodes": [node("broken", cpu="many"), node("fine")], "workload": [pod("job")]})
    refused = events(report, "NodeRefused")
    assert len(refused) == 1 and refused[0]["objectID"] == "broken" and "'many'" in refused[0]["message"]
    assert [n["nodeID"] for n in report["state"]["nodes"]] == ["fine"]
    assert report["pods"]["default/job"]["node"] == "fine"


def test_quota_the_core_refuses_is_an_event_and_pods_fall_back_to_default() -> None:
    report = run(
        quotas=[quota("team", min_cpu="8", max_cpu="4"), quota("typo", min_cpu="1", max_cpu="x")],
        workload=[pod("job", namespace="team")],
    )
    reasons = {e["objectID"]: e["message"] for e in events(report, "QuotaRefused")}
    assert set(reasons) == {"team", "typo"}
    assert "min" in reasons["team"] and "'x'" in reasons["typo"]
    assert report["pods"]["team/job"]["quota"] == "default"


def test_deleting_a_quota_in_use_is_refused() -> None:
    report = run(
        quotas=[quota("team", min_cpu="1", max_cpu="4")],
        workload=[pod("job", namespace="team")],
        events=[{"at": 10, "action": "delete", "kind": "ElasticQuota", "name": "team"}],
    )
    assert len(events(report, "QuotaRefused")) == 1
    assert report["state"]["quotas"][0]["name"] == "team"


def test_events_naming_missing_objects_say_so() -> None:
    report = run(
        events=[
            {"at": 1, "action": "remove-node", "name": "ghost"},
            {"at": 2, "action": "cordon-node", "name": "ghost"},
            {"at": 3, "action": "delete", "kind": "Pod", "name": "nobody"},
            {"at": 4, "action": "delete", "kind": "ElasticQuota", "name": "none"},
        ]
    )
    assert [e["reason"] for e in report["events"] if e["type"] == "SCENARIO"] == [
        "NodeNotFound",
        "NodeNotFound",
        "NotFound",
        "QuotaNotFound",
    ]


def test_foreign_pod_with_a_malformed_quantity_is_reported_not_placed() -> None:
    report = run(workload=[pod("odd", scheduler="default-scheduler", cpu="1x")])
    odd = report["pods"]["default/odd"]
    assert odd["state"] == "Foreign" and odd["node"] is None and "'1x'" in odd["reason"]


def test_pod_applied_twice_while_alive_is_refused() -> None:
    again = {"at": 5, "action": "apply", "object": pod("job")["pod"]}
    report = run(workload=[pod("job")], events=[again])
    assert [e["reason"] for e in report["events"] if e["type"] == "SCENARIO"] == ["PodRefused"]
    assert report["summary"]["pods"] == 1


def test_foreign_pod_no_node_accepts_waits_with_the_reason() -> None:
    report = simulate(
        {
            "nodes": [node("a", labels={"disk": "hdd"}), node("b")],
            "workload": [pod("fast", scheduler=None, nodeSelector={"disk": "ssd"})],
        }
    )
    fast = report["pods"]["default/fast"]
    assert fast["state"] == "Foreign" and fast["node"] is None
    assert fast["reason"].startswith("no node fits") and "2 node selector mismatch" in fast["reason"]


def test_a_negative_request_never_lowers_usage_so_the_node_is_never_overfilled() -> None:
    report = simulate(
        {
            "nodes": [node(cpu="4")],
            "workload": [pod("minus", cpu="-4"), pod("one", count=8, at=1)],
            "until": 10,
        }
    )
    minus = report["pods"]["default/minus"]
    assert minus["state"] == "Pending" and "negative quantity '-4'" in minus["reason"]
    running = [key for key, p in report["pods"].items() if p["state"] == "Running"]
    assert len(running) == 4  # 4 one-cpu pods on a 4-cpu node, not 8
