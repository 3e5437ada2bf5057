"""Every shipped example (shim/sim/examples/) runs cleanly and shows the behaviour its comments explain."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sim.scenarios import EXAMPLES, events, node_doc, queue_of, quota_doc, simulate_example

EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.yaml"))


def waited_reasons(report: dict[str, Any], name: str) -> list[str]:
    return [e["message"] for e in report["events"] if e["reason"] == "Unschedulable" and e.get("name") == name]


@pytest.mark.parametrize("example", EXAMPLE_FILES)
def test_every_example_runs_cleanly(example: str) -> None:
    report = simulate_example(example)
    assert report["summary"]["pods"] > 0
    refused = [e for e in report["events"] if e["reason"].endswith("Refused") or e["reason"] == "TooManyRounds"]
    assert refused == []
    if example != "what-if.yaml":  # a replay cut at `until`: what still waits then is its point
        assert all(pod["state"] != "Pending" for pod in report["pods"].values()), "an example ends with work stuck"


def test_examples_cover_the_documented_set() -> None:
    assert {
        "queues-with-quotas.yaml",
        "namespace-mapping.yaml",
        "foreign-pods.yaml",
        "elastic-borrowing.yaml",
        "user-limits.yaml",
        "placement-rules.yaml",
        "gangs.yaml",
    } <= set(EXAMPLE_FILES)


def test_queue_max_holds_pods_back_while_the_cluster_has_room() -> None:
    report = simulate_example("queues-with-quotas.yaml")
    pods, at30 = report["pods"], report["snapshots"]["30"]
    assert [pods[f"batch/batch-job-{i}"]["bound"] for i in range(8)] == [0, 0, 0, 0, 60, 60, 60, 60]
    assert queue_of(at30, "root.batch")["allocatedResource"]["vcore"] == 8000
    assert queue_of(at30, "root")["allocatedResource"]["vcore"] == 16000  # half the cluster idle
    assert any("queue root.batch would exceed max vcore" in r for r in waited_reasons(report, "batch/batch-job-4"))


def test_parent_max_bounds_its_children_together() -> None:
    report = simulate_example("queues-with-quotas.yaml")
    at30 = report["snapshots"]["30"]
    assert queue_of(at30, "root.research")["allocatedResource"]["vcore"] == 8000
    assert queue_of(at30, "root.research.nlp")["allocatedResource"]["vcore"] == 4000
    assert queue_of(at30, "root.research.vision")["allocatedResource"]["vcore"] == 4000
    assert any("queue root.research would exceed max" in r for r in waited_reasons(report, "research/nlp-train-2"))


def test_guaranteed_shares_a_full_cluster() -> None:
    at250 = simulate_example("queues-with-quotas.yaml")["snapshots"]["250"]
    assert queue_of(at250, "root.production")["allocatedResource"]["vcore"] == 24000
    assert queue_of(at250, "root.development")["allocatedResource"]["vcore"] == 8000


def test_namespace_annotations_choose_the_parent_and_limit_the_created_queue() -> None:
    report = simulate_example("namespace-mapping.yaml")
    pods, at30 = report["pods"], report["snapshots"]["30"]
    assert {pods[f"finance/ledger-{i}"]["queue"] for i in range(6)} == {"root.production.finance"}
    finance = queue_of(at30, "root.production.finance")
    assert not finance["isManaged"]
    assert finance["maxResource"]["vcore"] == 8000
    assert finance["allocatedResource"]["vcore"] == 8000
    assert any(
        "queue root.production.finance would exceed max" in r for r in waited_reasons(report, "finance/ledger-4")
    )
    marketing = queue_of(at30, "root.production.marketing")  # parent named without "root."
    assert marketing["maxResource"] == {"vcore": 4000}
    assert pods["team-x/build-0"]["queue"] == "root.team-x"
    assert queue_of(at30, "root.team-x")["maxResource"] == {}


def test_malformed_namespace_annotation_keeps_pods_pending_until_fixed() -> None:
    report = simulate_example("namespace-mapping.yaml")
    dashboard = report["pods"]["analytics/dashboard-0"]
    reasons = waited_reasons(report, "analytics/dashboard-0")
    assert reasons and "namespace analytics annotation yunikorn.apache.org/namespace.quota" in reasons[0]
    assert "'eight'" in reasons[0]
    assert dashboard["bound"] == 60 and dashboard["queue"] == "root.analytics"


def test_foreign_and_static_pods_occupy_nodes_herder_shares() -> None:
    report = simulate_example("foreign-pods.yaml")
    pods, at60 = report["pods"], report["snapshots"]["60"]
    worker0 = node_doc(at60, "worker-0")
    tags = {a["name"]: a["allocationTags"]["foreign"] for a in worker0["foreignAllocations"]}
    assert tags == {
        "kube-system/kube-proxy-worker-0": "static",
        "web/web-0": "default",
        "web/web-1": "default",
        "web/web-2": "default",
    }
    assert worker0["occupied"]["vcore"] == 6500
    assert worker0["allocations"] == []
    assert pods["web/web-3"]["node"] == "worker-1"
    assert all(pods[f"kube-system/kube-proxy-worker-{i}"]["state"] == "Foreign" for i in range(3))
    assert report["summary"]["foreign"] == 8
    crunch = [pods[f"batch/crunch-{i}"] for i in range(12)]
    assert sum(1 for p in crunch if p["bound"] == 10) == 5
    assert sum(1 for p in crunch if p["bound"] == 120) == 4  # after the web pods were deleted
    assert any("no node fits" in r for r in waited_reasons(report, "batch/crunch-7"))


def test_other_scheduler_keeps_its_pod_pending_until_room_frees() -> None:
    report = simulate_example("foreign-pods.yaml")
    pods, at200 = report["pods"], report["snapshots"]["200"]
    assert pods["web/web-0"]["finished"] == 120 and "deleted" in pods["web/web-0"]["reason"]
    assert pods["web/report"]["created"] == 130 and pods["web/report"]["bound"] == 310
    for i in range(3):  # only the static pods are left beside Herder's; the report pod waits
        foreign = node_doc(at200, f"worker-{i}")["foreignAllocations"]
        assert [a["allocationTags"]["foreign"] for a in foreign] == ["static"]


def test_borrowed_capacity_is_recycled_after_the_delay() -> None:
    report = simulate_example("elastic-borrowing.yaml")
    pods = report["pods"]
    team_a = quota_doc(report["snapshots"]["90"], "team-a")
    assert team_a["used"]["vcore"] == 28000 and team_a["runtime"]["vcore"] == 28000
    at130 = report["snapshots"]["130"]
    assert quota_doc(at130, "team-a")["runtime"]["vcore"] == 16000
    assert quota_doc(at130, "team-a")["used"]["vcore"] == 28000  # the delay is still running
    evicted = sorted(name for name, p in pods.items() if p["state"] == "Evicted")
    assert evicted == [f"team-a/a-burst-{i}" for i in range(6)]
    assert {pods[name]["evicted"] for name in evicted} == {160}
    assert "quota team-a above its runtime" in pods["team-a/a-burst-0"]["reason"]
    assert pods["team-a/a-critical-0"]["state"] == "Running"  # newer, but higher priority
    assert pods["team-a/a-train-0"]["state"] == "Running"
    assert [pods[f"team-b/b-etl-{i}"]["bound"] for i in range(8)] == [100, 100] + [160] * 6
    at170 = report["snapshots"]["170"]
    assert quota_doc(at170, "team-a")["used"]["vcore"] == 16000
    assert quota_doc(at170, "team-b")["used"]["vcore"] == 16000
    assert len(events(report, "Evicted")) == 6


def test_user_limits_example_shows_each_limit() -> None:
    report = simulate_example("user-limits.yaml")
    pods = report["pods"]
    assert pods["research/alice-train-4"]["bound"] == 60
    assert (
        "user alice would exceed maxresources at root.research" in waited_reasons(report, "research/alice-train-4")[0]
    )
    assert pods["research/bob-tune-2"]["bound"] == 65
    assert "maxapplications 2" in waited_reasons(report, "research/dave-backtest")[0]
    assert "user erin would exceed maxapplications 3 at root" in waited_reasons(report, "batch/erin-etl-4")[0]
    alice = next(u for u in report["snapshots"]["30"]["usage"]["users"] if u["userName"] == "alice")
    assert alice["queues"]["queuePath"] == "root"


def test_training_gangs_in_four_dialects_each_run_whole_and_a_short_one_holds_nothing() -> None:
    report = simulate_example("training-gangs.yaml")
    pods = report["pods"]
    bound = {name: pod["bound"] for name, pod in pods.items() if not pod.get("placeholder")}
    assert [bound[f"vision/resnet-worker-{i}"] for i in range(4)] == [10] * 4  # scheduler-plugins, once 4 exist
    assert [bound[n] for n in ("nlp/bert-ps-0", "nlp/bert-worker-0", "nlp/bert-worker-1")] == [0, 0, 0]  # Volcano
    assert bound["vision/notebook"] == 5, "the ResNet gang, one pod short, held none of the room"
    assert [bound[f"research/llm-worker-{i}"] for i in range(4)] == [100] * 4  # Kubernetes PodGroup, whole
    assert [bound[f"batch/etl-{i}"] for i in range(2)] == [40, 40]  # the Workload applied at t=40
    assert "needs 4 pods before any is placed: 3 exist" in waited_reasons(report, "vision/resnet-worker-0")[0]
    assert waited_reasons(report, "batch/etl-0") == [
        "waits for Workload batch/etl (Kubernetes), which does not exist yet",
        "waiting for all 2 placeholders of its gang to be allocated",
    ]
    placeholders = [pod for pod in pods.values() if pod.get("placeholder")]
    assert len(placeholders) == 17 and {pod["state"] for pod in placeholders} == {"Replaced"}
    sources = {app["applicationID"]: app.get("gangSource") for app in report["snapshots"]["35"]["applications"]}
    assert sources["research-llm"] == "Kubernetes PodGroup research/llm"
    assert sources["vision-resnet"] == "scheduler-plugins PodGroup vision/resnet"


def test_training_gangs_keeps_a_gang_in_one_rack_and_one_no_rack_can_hold_waits_holding_nothing() -> None:
    report = simulate_example("training-gangs.yaml")
    pods = report["pods"]
    whisper = [pods[f"speech/whisper-worker-{i}"] for i in range(4)]  # the Kubernetes PodGroup's constraint
    assert {pod["bound"] for pod in whisper} == {170}
    assert {pod["node"].rpartition("-gpu")[0] for pod in whisper} == {"r1"}, "the whole gang in one rack"
    vit = [f"vision/vit-worker-{i}" for i in range(5)]  # Kueue's annotation on a scheduler-plugins gang
    assert {pods[name]["bound"] for name in vit} == {None}, "none ran until its owner deleted it at t=240"
    for name in vit:
        assert waited_reasons(report, name) == [
            "waiting for all 5 placeholders of its gang to be allocated: no rack (label topology.example.com/rack)"
            " could ever hold the gang's 5 x 4 cores"
        ]
    assert not [
        name for name, pod in pods.items() if pod.get("placeholder") and name.startswith("vision/tg-vision-vit")
    ]
    apps = {app["applicationID"]: app for app in report["snapshots"]["200"]["applications"]}
    assert apps["speech-whisper"]["gangTopology"] == {
        "key": "topology.example.com/rack",
        "mode": "Required",
        "domains": ["r1"],
        "fixed": True,
    }
    assert apps["vision-vit"]["gangPhase"] == "Reserving" and apps["vision-vit"]["gangTopology"]["domains"] == []
