"""Cross-queue preemption through `herder simulate`, timed on the virtual clock."""

from __future__ import annotations

from typing import Any

import pytest

from shim.sim.scenario import ScenarioError
from tests.sim.scenarios import events, node, pod, queue_of, simulate, simulate_example


def test_the_example_gives_the_guaranteed_queue_its_share_after_the_delay() -> None:
    report = simulate_example("queue-preemption.yaml")
    pods = report["pods"]
    assert [pods[f"ml/ml-{i}"]["bound"] for i in range(10)] == [90] * 8 + [690] * 2
    evicted = sorted(name for name, p in pods.items() if p["state"] == "Evicted")
    assert len(evicted) == 8 and all(name.startswith("batch/nightly-") for name in evicted)
    assert all(pods[name]["evicted"] == 90 for name in evicted)
    assert all(pods[f"batch/archive-{i}"]["state"] == "Succeeded" for i in range(4))  # opted out: last
    assert queue_of(report["snapshots"]["90"], "root.ml")["allocatedResource"]["vcore"] == 8000
    assert len(events(report, "Preempted")) == 8


def _queues(*children: dict[str, Any]) -> dict[str, Any]:
    return {
        "partitions": [
            {
                "name": "default",
                "placementrules": [{"name": "provided"}],
                "queues": [
                    {
                        "name": "root",
                        "submitacl": "*",
                        "properties": {"preemption.delay": "30s"},
                        "queues": list(children),
                    }
                ],
            }
        ]
    }


def _in(queue: str, app: str) -> dict[str, str]:
    return {"yunikorn.apache.org/queue": queue, "yunikorn.apache.org/app-id": app}


def test_a_victim_queue_keeps_its_own_guarantee() -> None:
    # YuniKorn's general case: two guaranteed queues; the one over its guarantee gives back only
    # what it has beyond it, however much the other still asks.
    report = simulate(
        {
            "name": "general",
            "config": _queues(
                {"name": "a", "resources": {"guaranteed": {"vcore": 3}}},
                {"name": "b", "resources": {"guaranteed": {"vcore": 5}}},
            ),
            "nodes": [node(cpu="8", memory="64Gi")],
            "workload": [
                pod("a-pod", count=8, duration=1000, labels=_in("root.a", "a-app")),
                pod("b-pod", at=10, count=8, duration=100, labels=_in("root.b", "b-app")),
            ],
            "snapshots": [40],
        }
    )
    at40 = report["snapshots"]["40"]
    assert queue_of(at40, "root.a")["allocatedResource"]["vcore"] == 3000  # its guarantee, never less
    assert queue_of(at40, "root.b")["allocatedResource"]["vcore"] == 5000
    assert sum(1 for p in report["pods"].values() if p["state"] == "Evicted") == 5


def test_a_fenced_tenant_preempts_inside_only() -> None:
    report = simulate(
        {
            "name": "fence",
            "config": _queues(
                {
                    "name": "tenant",
                    "properties": {"preemption.policy": "fence"},
                    "resources": {"guaranteed": {"vcore": 6}},
                    "queues": [{"name": "urgent", "resources": {"guaranteed": {"vcore": 2}}}, {"name": "bulk"}],
                },
                {"name": "other"},
            ),
            "nodes": [node(cpu="8", memory="64Gi")],
            "workload": [
                pod("bulk", count=4, duration=1000, labels=_in("root.tenant.bulk", "bulk-app")),
                pod("other", at=1, count=4, duration=1000, labels=_in("root.other", "other-app")),
                pod("urgent", at=10, count=2, duration=100, labels=_in("root.tenant.urgent", "urgent-app")),
            ],
        }
    )
    evicted = sorted(name for name, p in report["pods"].items() if p["state"] == "Evicted")
    # root.other's pods are newer (better victims) but outside the fence
    assert len(evicted) == 2 and all(name.startswith("default/bulk-") for name in evicted)
    assert [report["pods"][f"default/urgent-{i}"]["bound"] for i in range(2)] == [40, 40]


def test_a_priority_class_that_opts_out_keeps_its_pods_and_gives_them_its_value() -> None:
    # YuniKorn's PriorityClass case: the class's allow-preemption annotation reaches its pods.
    keep = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "keep", "annotations": {"yunikorn.apache.org/allow-preemption": "false"}},
        "value": 0,
    }
    report = simulate(
        {
            "name": "priority-class",
            "config": _queues({"name": "ml", "resources": {"guaranteed": {"vcore": 2}}}, {"name": "batch"}),
            "nodes": [node(cpu="4", memory="64Gi")],
            "priorityclasses": [keep],
            "workload": [
                pod("plain", count=2, duration=1000, labels=_in("root.batch", "plain")),
                # newer, so first in line, but their class opts them out
                pod("kept", at=1, count=2, duration=1000, labels=_in("root.batch", "kept"), priorityClassName="keep"),
                pod("ml", at=10, count=2, duration=100, labels=_in("root.ml", "ml")),
            ],
        }
    )
    pods = report["pods"]
    assert [pods[f"default/plain-{i}"]["state"] for i in range(2)] == ["Evicted", "Evicted"]
    assert [pods[f"default/kept-{i}"]["state"] for i in range(2)] == ["Succeeded", "Succeeded"]
    assert [pods[f"default/ml-{i}"]["bound"] for i in range(2)] == [40, 40]


def test_a_priority_class_without_an_integer_value_is_refused() -> None:
    bad = {"metadata": {"name": "odd"}, "value": "high"}
    with pytest.raises(ScenarioError) as refused:
        simulate({"name": "bad", "config": _queues({"name": "a"}), "priorityclasses": [bad]})
    assert "priorityclasses[0].value: expected an integer, got 'high'" in str(refused.value)


def test_a_priority_queue_preempts_pods_of_a_higher_pod_priority() -> None:
    # YuniKorn's priority-queue case: the queue's offset counts, not only the pods' priorities.
    def run(offset: str) -> dict[str, Any]:
        return simulate(
            {
                "name": "priority-queue",
                "config": _queues(
                    {
                        "name": "urgent",
                        "properties": {"priority.offset": offset},
                        "resources": {"guaranteed": {"vcore": 2}},
                    },
                    {"name": "batch"},
                ),
                "nodes": [node(cpu="2", memory="64Gi")],
                "workload": [
                    pod("batch", count=2, duration=1000, priority=100, labels=_in("root.batch", "batch")),
                    pod("urgent", at=10, count=2, duration=100, priority=0, labels=_in("root.urgent", "urgent")),
                ],
            }
        )

    pods = run("1000")["pods"]
    assert [pods[f"default/urgent-{i}"]["bound"] for i in range(2)] == [40, 40]
    pods = run("0")["pods"]  # priority 0 may not preempt priority 100: they wait for the batch pods
    assert [pods[f"default/urgent-{i}"]["bound"] for i in range(2)] == [1000, 1000]


HOSTNAME = "kubernetes.io/hostname"


def _away_from(**labels: str) -> dict[str, Any]:
    term = {"topologyKey": HOSTNAME, "labelSelector": {"matchLabels": labels}}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _guaranteed_a_and_open_b() -> dict[str, Any]:
    return _queues({"name": "a", "resources": {"guaranteed": {"vcore": 2}}}, {"name": "b"})


def test_preemption_plans_only_on_nodes_the_preemptors_rules_allow() -> None:
    # Both nodes are full; evicting one pod of queue b makes room on either. n1 sorts first, but a
    # pod there (not a victim: another scheduler's) repels the preemptor, so n2 gives the room.
    guard = pod("guard", scheduler="default-scheduler", labels={"role": "guard"}, nodeSelector={HOSTNAME: "n1"})
    batch = pod("batch", at=1, count=7, duration=1000, labels=_in("root.b", "batch"))
    preemptor = pod("urgent", at=10, labels=_in("root.a", "urgent"), affinity=_away_from(role="guard"))
    report = simulate(
        {
            "config": _guaranteed_a_and_open_b(),
            "nodes": [node("n1", cpu="4"), node("n2", cpu="4")],
            "workload": [guard, batch, preemptor],
            "until": 100,
        }
    )
    pods = report["pods"]
    assert pods["default/urgent"]["node"] == "n2"
    evicted = [p for p in pods.values() if p["state"] == "Evicted"]
    assert [p["node"] for p in evicted] == ["n2"]


def test_preemption_evicts_the_pod_whose_presence_the_preemptors_anti_affinity_refuses() -> None:
    # Room is not what is missing: every node runs a pod of app=batch, which the preemptor must
    # not share a node with. Evicting the one batch pod on n1 lets it in; n2 would need two.
    labels = {**_in("root.b", "batch"), "app": "batch"}
    on_n1 = pod("batch-n1", count=1, duration=1000, labels=labels, nodeSelector={HOSTNAME: "n1"})
    on_n2 = pod("batch-n2", count=2, duration=1000, labels=labels, nodeSelector={HOSTNAME: "n2"})
    preemptor = pod("urgent", at=10, labels=_in("root.a", "urgent"), affinity=_away_from(app="batch"))
    report = simulate(
        {
            "config": _guaranteed_a_and_open_b(),
            "nodes": [node("n1", cpu="4"), node("n2", cpu="4")],
            "workload": [on_n1, on_n2, preemptor],
            "until": 100,
        }
    )
    pods = report["pods"]
    assert pods["default/urgent"]["node"] == "n1"
    assert pods["default/urgent"]["bound"] == 40  # after root's preemption.delay of 30 s
    assert [name for name, p in pods.items() if p["state"] == "Evicted"] == ["default/batch-n1"]
    assert all(pods[f"default/batch-n2-{i}"]["state"] == "Running" for i in range(2))


def _budget(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "batch"}}, **spec},
    }


@pytest.mark.parametrize(
    ("budget", "evicted"), [({"maxUnavailable": 0}, 0), ({"maxUnavailable": 1}, 1), ({"minAvailable": "50%"}, 2)]
)
def test_a_disruption_budget_refuses_evictions_as_the_eviction_api_does(budget: dict[str, Any], evicted: int) -> None:
    # Queue a wants its 4-core guarantee back from b's four batch pods; the budget says how many may go.
    batch = pod("batch", count=4, duration=1000, labels={**_in("root.b", "batch"), "app": "batch"})
    urgent = pod("urgent", at=10, count=4, labels=_in("root.a", "urgent"))
    report = simulate(
        {
            "config": _queues({"name": "a", "resources": {"guaranteed": {"vcore": 4}}}, {"name": "b"}),
            "nodes": [node("n", cpu="4")],
            "objects": [_budget("keep-batch", **budget)],
            "workload": [batch, urgent],
            "until": 100,
        }
    )
    pods = report["pods"]
    assert sum(1 for p in pods.values() if p["state"] == "Evicted") == evicted
    assert sum(1 for i in range(4) if pods[f"default/urgent-{i}"]["state"] == "Running") == evicted
    refusals = events(report, "EvictionRefused")
    assert all("disruption budget default/keep-batch" in e["message"] for e in refusals)
    assert bool(refusals) == (evicted < 4)


def test_the_parent_max_example_gives_the_guaranteed_queue_its_share_under_the_max() -> None:
    report = simulate_example("preemption-under-a-max.yaml")
    pods = report["pods"]
    at10, at15 = report["snapshots"]["10"], report["snapshots"]["15"]
    used = [(queue_of(s, "root.normal.queue-1"), queue_of(s, "root.normal.queue-2")) for s in (at10, at15)]
    assert [(a["allocatedResource"]["vcore"], b["allocatedResource"]["vcore"]) for a, b in used] == [
        (10000, 2000),
        (7000, 5000),
    ]
    assert sorted(name for name, p in pods.items() if p["state"] == "Evicted") == [
        f"default/first-{i}" for i in range(3)
    ]
    assert [pods[f"default/second-{i}"]["bound"] for i in range(10)] == [5, 5, 15, 15, 15, 305, 305, 315, 315, 315]


@pytest.mark.parametrize(("budget", "victim_node"), [({"maxUnavailable": 0}, "n2"), ({"maxUnavailable": 1}, "n1")])
def test_preemption_takes_its_victims_where_no_disruption_budget_is_broken(
    budget: dict[str, Any], victim_node: str
) -> None:
    # Both nodes are full of queue b's pods and either could make room; n1's are protected by a
    # budget. As kube-scheduler does, the node whose victims break no budget is chosen, so no
    # eviction is refused; a budget that still allows one to go does not count against n1.
    batch = {**_in("root.b", "batch"), "app": "batch"}
    report = simulate(
        {
            "config": _queues({"name": "a", "resources": {"guaranteed": {"vcore": 1}}}, {"name": "b"}),
            "nodes": [node("n1", cpu="4"), node("n2", cpu="4")],
            "objects": [_budget("keep-batch", **budget)],
            "workload": [
                pod("batch", count=4, duration=1000, labels=batch, nodeSelector={HOSTNAME: "n1"}),
                pod("other", count=4, duration=1000, labels=_in("root.b", "other"), nodeSelector={HOSTNAME: "n2"}),
                pod("urgent", at=10, labels=_in("root.a", "urgent")),
            ],
            "until": 100,
        }
    )
    pods = report["pods"]
    assert [p["node"] for p in pods.values() if p["state"] == "Evicted"] == [victim_node]
    assert pods["default/urgent"]["node"] == victim_node and pods["default/urgent"]["bound"] == 40
    assert events(report, "EvictionRefused") == []
