"""A simulation run: virtual time, scenario events, the recycler's timing, snapshots and the report."""

from __future__ import annotations

import gc
from typing import Any

from shim.sim.cluster import SUCCEEDED, SimCluster
from shim.sim.engine import Simulation
from shim.sim.scenario import parse_scenario
from tests.sim.scenarios import events, node, node_doc, pod, queue_of, quota, quota_doc, simulate, simulate_example

LENDING = {
    "settings": {"quota.recycle.delay": "30s", "quota.recycle.interval": "10s"},
    "nodes": [node(cpu="8")],
    "quotas": [quota("a", min_cpu="4", max_cpu="8"), quota("b", min_cpu="4", max_cpu="8")],
    "workload": [
        pod("borrow", namespace="a", count=8, cpu="1"),
        pod("claim", namespace="b", at=105, count=4, cpu="1", duration=50),
    ],
    "until": 400,
}


def without_wall_time(report: dict[str, Any]) -> dict[str, Any]:
    return {**report, "summary": {k: v for k, v in report["summary"].items() if k != "wall_seconds"}}


def test_same_scenario_gives_the_same_report() -> None:
    first = simulate_example("elastic-borrowing.yaml")
    second = simulate_example("elastic-borrowing.yaml")
    assert without_wall_time(first) == without_wall_time(second)
    assert without_wall_time(simulate(LENDING)) == without_wall_time(simulate(LENDING))


def test_pods_run_for_their_duration_and_queue_behind_a_full_node() -> None:
    report = simulate({"nodes": [node(cpu="2")], "workload": [pod("job", count=3, cpu="1", duration=40)]})
    pods = report["pods"]
    assert [(pods[f"default/job-{i}"]["bound"], pods[f"default/job-{i}"]["finished"]) for i in range(3)] == [
        (0, 40),
        (0, 40),
        (40, 80),
    ]
    assert all(p["state"] == "Succeeded" and p["node"] == "worker" for p in pods.values())
    assert report["summary"] == {
        **report["summary"],
        "pods": 3,
        "bound": 3,
        "pending": 0,
        "running": 0,
        "finished": 3,
        "evicted": 0,
        "foreign": 0,
    }


def test_without_until_the_run_ends_when_nothing_can_change() -> None:
    job = pod("job", duration=40, labels={"yunikorn.apache.org/app-id": "job"})
    forever = pod("forever", at=5, labels={"yunikorn.apache.org/app-id": "forever"})
    report = simulate({"nodes": [node()], "workload": [job, forever]})
    # job ends at 40; its application completes 30 s later; then nothing is left to happen
    assert report["until"] == 70
    assert report["pods"]["default/forever"]["state"] == "Running"
    assert report["summary"]["sim_seconds"] == 70


def test_until_stops_the_clock_with_pods_still_running() -> None:
    report = simulate({"nodes": [node()], "workload": [pod("job", duration=500)], "until": 100})
    assert report["until"] == 100
    assert report["pods"]["default/job"]["state"] == "Running"
    assert report["pods"]["default/job"]["finished"] is None


def test_long_runs_step_from_event_to_event() -> None:
    scenario = parse_scenario({"nodes": [node()], "workload": [pod("job", duration=10_000_000)], "until": 20_000_000})
    moments: list[float] = []

    def progress(now: float, cluster: SimCluster) -> None:
        moments.append(now)

    Simulation(scenario, progress).run()
    assert moments == [0.0, 10_000_000.0, 10_000_030.0]


def test_snapshots_show_the_state_at_their_time() -> None:
    report = simulate(
        {
            "nodes": [node()],
            "workload": [pod("job", at=10, cpu="2", duration=20)],
            "snapshots": [5, 15, 35],
            "until": 60,
        }
    )
    allocated = {t: (queue_of(s, "root")["allocatedResource"].get("vcore", 0)) for t, s in report["snapshots"].items()}
    assert allocated == {"5": 0, "15": 2000, "35": 0}
    assert set(report["snapshots"]["15"]) >= {
        "partitions",
        "queues",
        "applications",
        "nodes",
        "usage",
        "quotas",
        "config",
    }


def test_timeline_samples_queue_and_quota_usage_when_they_change() -> None:
    report = simulate(LENDING)
    timeline = report["timeline"]
    assert [s["time"] for s in timeline] == sorted({s["time"] for s in timeline})
    first = timeline[0]
    assert first["time"] == 0 and first["pending"] == 0 and first["running"] == 8
    assert first["quotas"]["a"] == {"used": {"vcore": 8000}, "runtime": {"vcore": 8000}}
    assert first["queues"]["root.a"]["vcore"] == 8000
    claim = next(s for s in timeline if s["time"] == 105)
    assert claim["quotas"]["a"]["runtime"] == {"vcore": 4000} and claim["pending"] == 4


def test_recycler_evicts_on_its_tick_after_the_delay() -> None:
    # b's pods arrive at 105; the recycler ticks every 10 s, so it first sees a above its
    # runtime at 110 and evicts at the first tick 30 s later: 140.
    report = simulate(LENDING)
    evicted = {name: p["evicted"] for name, p in report["pods"].items() if p["state"] == "Evicted"}
    assert len(evicted) == 4 and set(evicted.values()) == {140}
    assert {report["pods"][f"b/claim-{i}"]["bound"] for i in range(4)} == {140}


def test_set_overrides_the_recycle_delay() -> None:
    report = simulate(LENDING, overrides={"quota.recycle.delay": "60s"})
    assert {p["evicted"] for p in report["pods"].values() if p["state"] == "Evicted"} == {170}


def test_recycler_disabled_never_evicts() -> None:
    report = simulate({**LENDING, "settings": {"quota.recycle.enabled": "false"}})
    assert report["summary"]["evicted"] == 0
    assert report["summary"]["pending"] == 4
    reason = report["pods"]["b/claim-0"]["reason"]
    assert reason.startswith("no node fits") or "cluster size" in reason


def test_settings_applied_during_the_run_take_effect() -> None:
    document = {
        **LENDING,
        "events": [{"at": 50, "action": "apply", "object": {"settings": {"quota.recycle.delay": "100s"}}}],
    }
    report = simulate(document)
    assert {p["evicted"] for p in report["pods"].values() if p["state"] == "Evicted"} == {210}
    assert events(report, "SettingsApplied")[0]["timestamp"] == 50


def test_removing_a_node_takes_its_pods_and_others_move_in_elsewhere() -> None:
    document = {
        "nodes": [node("a", cpu="2"), node("b", cpu="2")],
        "workload": [pod("job", count=4, cpu="1"), pod("later", at=20, cpu="1")],
        "events": [
            {"at": 10, "action": "remove-node", "name": "a"},
            {"at": 30, "action": "add-node", "node": node("c", count=2, cpu="4")},
        ],
        "until": 60,
    }
    report = simulate(document)
    pods = report["pods"]
    on_a = [name for name, p in pods.items() if p["node"] == "a"]
    assert len(on_a) == 2
    assert all(pods[name]["state"] == "Evicted" and pods[name]["reason"] == "node a was removed" for name in on_a)
    assert all(pods[name]["evicted"] == 10 for name in on_a)
    assert pods["default/later"]["bound"] == 30 and pods["default/later"]["node"].startswith("c-")
    assert [n["nodeID"] for n in report["state"]["nodes"]] == ["b", "c-0", "c-1"]


def test_cordoned_node_takes_no_new_pods() -> None:
    document = {
        "nodes": [node("a", cpu="4"), node("b", cpu="4")],
        "workload": [pod("first", cpu="1"), pod("second", at=20, count=3, cpu="1")],
        "events": [
            {"at": 10, "action": "cordon-node", "name": "a"},
            {"at": 30, "action": "uncordon-node", "name": "a"},
        ],
        "until": 40,
    }
    report = simulate(document)
    pods = report["pods"]
    assert pods["default/first"]["node"] == "a" and pods["default/first"]["state"] == "Running"
    assert {pods[f"default/second-{i}"]["node"] for i in range(3)} == {"b"}
    assert node_doc(report["state"], "a")["schedulable"] is True


def test_deleting_pods_frees_their_place_for_waiting_pods() -> None:
    document = {
        "nodes": [node(cpu="2")],
        "workload": [pod("hog", count=2, cpu="1", labels={"app": "hog"}), pod("waiting", at=5, cpu="1")],
        "events": [{"at": 20, "action": "delete", "kind": "Pod", "namespace": "default", "name": "hog-0"}],
        "until": 30,
    }
    report = simulate(document)
    pods = report["pods"]
    assert pods["default/hog-0"]["state"] == "Evicted" and pods["default/hog-0"]["evicted"] == 20
    assert "deleted by the scenario" in pods["default/hog-0"]["reason"]
    assert pods["default/waiting"]["bound"] == 20


def test_quota_applied_mid_run_limits_new_pods() -> None:
    document = {
        "nodes": [node(cpu="16")],
        "namespaces": [{"metadata": {"name": "team"}}],
        "workload": [
            pod("early", namespace="team", count=2, cpu="2"),
            pod("late", namespace="team", at=20, count=2, cpu="2"),
        ],
        "events": [{"at": 10, "action": "apply", "object": quota("team", min_cpu="4", max_cpu="4")}],
        "until": 30,
    }
    report = simulate(document)
    pods = report["pods"]
    assert pods["team/early-0"]["state"] == "Running" and pods["team/early-0"]["quota"] == "team"
    assert [pods[f"team/late-{i}"]["state"] for i in range(2)] == ["Pending", "Pending"]
    assert "quota team would exceed its runtime" in pods["team/late-0"]["reason"]
    assert quota_doc(report["state"], "team")["max"] == {"vcore": 4000}


def test_in_quota_preemption_evicts_a_lower_priority_pod_of_the_same_quota() -> None:
    document = {
        "nodes": [node(cpu="4")],
        "quotas": [quota("team", min_cpu="4", max_cpu="4")],
        "workload": [
            pod("low", namespace="team", count=4, cpu="1", priority=0),
            pod("urgent", namespace="team", at=10, cpu="1", priority=100),
        ],
        "until": 20,
    }
    report = simulate(document)
    pods = report["pods"]
    preempted = [name for name, p in pods.items() if p["state"] == "Evicted"]
    assert len(preempted) == 1 and "preempted by team/urgent" in pods[preempted[0]]["reason"]
    assert pods["team/urgent"]["state"] == "Running" and pods["team/urgent"]["bound"] == 10


def test_herder_pod_created_bound_counts_as_running() -> None:
    document = {
        "nodes": [node(cpu="4")],
        "workload": [pod("pinned", cpu="3", nodeName="worker"), pod("next", at=1, cpu="2")],
    }
    report = simulate(document)
    assert report["pods"]["default/pinned"]["state"] == "Running"
    assert report["pods"]["default/next"]["state"] == "Pending"
    assert queue_of(report["state"], "root.default")["allocatedResource"]["vcore"] == 3000


def test_foreign_pod_goes_to_the_first_node_its_selector_allows() -> None:
    document = {
        "nodes": [node("plain"), node("gpu", labels={"accel": "gpu"})],
        "workload": [pod("viz", scheduler=None, nodeSelector={"accel": "gpu"})],
    }
    report = simulate(document)
    assert report["pods"]["default/viz"] == {**report["pods"]["default/viz"], "state": "Foreign", "node": "gpu"}
    assert node_doc(report["state"], "gpu")["foreignAllocations"][0]["allocationTags"]["foreign"] == "default"


def test_pod_reports_its_queue_quota_and_user() -> None:
    document = {
        "nodes": [node()],
        "quotas": [quota("ml", min_cpu="2", max_cpu="4")],
        "workload": [pod("train", namespace="ml", annotations={"yunikorn.apache.org/user.info": '{"user": "ann"}'})],
    }
    entry = simulate(document)["pods"]["ml/train"]
    assert entry == {**entry, "queue": "root.ml", "quota": "ml", "user": "ann", "created": 0, "bound": 0}


def test_pod_applied_by_an_event_arrives_then_and_runs_for_its_duration() -> None:
    document = {
        "nodes": [node()],
        "events": [{"at": 15, "action": "apply", "object": pod("adhoc")["pod"], "duration": 30}],
    }
    entry = simulate(document)["pods"]["default/adhoc"]
    assert (entry["created"], entry["bound"], entry["finished"], entry["state"]) == (15, 15, 45, "Succeeded")


def test_deleting_a_namespace_takes_its_pods_and_quotas() -> None:
    document = {
        "nodes": [node()],
        "namespaces": [{"metadata": {"name": "team"}}],
        "quotas": [quota("team", min_cpu="1", max_cpu="4")],
        "workload": [pod("job", namespace="team", count=2), pod("other")],
        "events": [{"at": 10, "action": "delete", "kind": "Namespace", "name": "team"}],
        "until": 20,
    }
    report = simulate(document)
    assert [report["pods"][f"team/job-{i}"]["state"] for i in range(2)] == ["Evicted", "Evicted"]
    assert report["pods"]["default/other"]["state"] == "Running"
    assert [q["name"] for q in report["state"]["quotas"]] == ["system", "default"]


def test_a_resize_event_gives_a_running_pod_its_new_total_and_the_kubelet_decides() -> None:
    # Issue 15, point 5: `{at, action: resize, namespace, name, requests: {cpu: "6"}}`.
    report = simulate(
        {
            "nodes": [node(cpu="8")],
            "workload": [pod("big", cpu="6"), pod("small", at=1, cpu="3")],
            "events": [
                {"at": 5, "action": "resize", "namespace": "default", "name": "big", "requests": {"cpu": "4"}},
                {"at": 10, "action": "resize", "name": "big", "requests": {"cpu": "9"}},
                {"at": 11, "action": "resize", "name": "gone", "requests": {"cpu": "1"}},
            ],
            "until": 20,
        }
    )
    assert report["pods"]["default/small"]["bound"] == 5  # the room big gave back
    events = {(e["objectID"], e["reason"]) for e in report["events"] if e["type"] == "SCENARIO"}
    assert ("default/big", "Resized") in events
    assert ("default/big", "ResizeInfeasible") in events  # 9 cores on an 8-core node: it keeps 4
    assert ("default/gone", "NotFound") in events
    assert node_doc(report["state"], "worker")["allocated"]["vcore"] == 7000  # big counted at the 4 it holds


def test_a_run_relaxes_the_cyclic_collector_only_while_it_plays() -> None:
    """The simulator freezes its set-up scenario out of the collector and scans less often while
    it plays; the process's settings are as they were once the run is over (tests, `--compare`
    and a served simulation share a process with other code)."""
    gc.unfreeze()  # as in a fresh process (another test may have run the operator, which freezes)
    before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    during: list[tuple[tuple[int, int, int], int]] = []
    scenario = parse_scenario({"nodes": [node(cpu="2")], "workload": [pod("job", count=3, cpu="1", duration=40)]})
    simulation = Simulation(
        scenario, progress=lambda t, cluster: during.append((gc.get_threshold(), gc.get_freeze_count()))
    )
    simulation.run()
    assert during and all(thresholds[0] >= 100_000 and frozen > frozen_before for thresholds, frozen in during)
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen_before
    assert simulation.cluster.counts[SUCCEEDED] == 3


def test_a_run_leaves_objects_someone_else_froze_frozen() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        simulate({"nodes": [node(cpu="2")], "workload": [pod("job", count=3, cpu="1", duration=40)]})
        assert gc.get_freeze_count() > frozen // 2  # still frozen (a few may have been freed since)
    finally:
        gc.unfreeze()
