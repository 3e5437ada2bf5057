"""YuniKorn's preemption guide (user_guide/preemption.md), replayed through `herder simulate`.

Each example of the guide puts its queues under a parent whose max is what fills up, on a
cluster with room to spare: the parent's max, not the nodes, is the limit, and preemption must
still give each queue its guarantee. Every test ends with the guide's numbers. As in the guide,
root sets `preemption.delay: 10s`; pods ask for one core (three in the priority-queue case).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sim.scenarios import events, node, pod, queue_of, simulate

ROOMY = [node("worker", count=2, cpu="64", memory="256Gi")]  # far more than any parent's max


def _guide(parent: dict[str, Any]) -> dict[str, Any]:
    root = {
        "name": "root",
        "submitacl": "*",
        "properties": {"preemption.policy": "fence", "preemption.delay": "10s"},
        "queues": [parent],
    }
    return {"partitions": [{"name": "default", "placementrules": [{"name": "provided"}], "queues": [root]}]}


def _queue(name: str, max_cores: int, guaranteed: int | None = None, **properties: str) -> dict[str, Any]:
    resources: dict[str, Any] = {"max": {"vcore": max_cores}}
    if guaranteed is not None:
        resources["guaranteed"] = {"vcore": guaranteed}
    doc: dict[str, Any] = {"name": name, "resources": resources}
    if properties:
        doc["properties"] = {key.replace("_", "."): value for key, value in properties.items()}
    return doc


def _in(queue: str, app: str) -> dict[str, str]:
    return {"yunikorn.apache.org/queue": queue, "yunikorn.apache.org/app-id": app}


def _cores(state: dict[str, Any], path: str) -> int:
    return int(queue_of(state, path)["allocatedResource"].get("vcore", 0)) // 1000


def _evicted(report: dict[str, Any]) -> list[str]:
    return sorted(name for name, p in report["pods"].items() if p["state"] == "Evicted")


def test_general_case_the_queue_under_its_guarantee_takes_it_back_under_the_parents_max() -> None:
    normal = _queue("normal", 12)
    normal["queues"] = [_queue("queue-1", 10, 5), _queue("queue-2", 10, 5)]
    report = simulate(
        {
            "name": "general",
            "config": _guide(normal),
            "nodes": ROOMY,
            "workload": [
                pod("q1", count=10, duration=1000, labels=_in("root.normal.queue-1", "app-1")),
                pod("q2", at=5, count=10, duration=1000, labels=_in("root.normal.queue-2", "app-2")),
            ],
            "snapshots": [10, 60],
            "until": 100,
        }
    )
    before, after = report["snapshots"]["10"], report["snapshots"]["60"]
    assert (_cores(before, "root.normal.queue-1"), _cores(before, "root.normal.queue-2")) == (10, 2)
    assert (_cores(after, "root.normal.queue-1"), _cores(after, "root.normal.queue-2")) == (7, 5)
    evicted = _evicted(report)
    assert len(evicted) == 3 and all(name.startswith("default/q1-") for name in evicted)
    assert {report["pods"][name]["evicted"] for name in evicted} == {15}  # queued at 5, delay 10s
    said = events(report, "Preempted")
    assert all("for room under queue root.normal's max" in e["message"] for e in said)
    # queue-2 at its guarantee: the rest wait for room under normal's max, and trigger nothing
    waiting = [p for name, p in report["pods"].items() if name.startswith("default/q2-") and p["state"] == "Pending"]
    assert len(waiting) == 5
    assert all("queue root.normal would exceed max vcore" in (p["reason"] or "") for p in waiting)


@pytest.mark.parametrize("opt_out", ["priority class", "pod annotation"])
def test_priority_class_case_pods_that_opt_out_keep_running(opt_out: str) -> None:
    parent = _queue("priority-class", 16)
    parent["queues"] = [_queue(f"queue-{i}", 8, 3) for i in (1, 2, 3)]
    keep: dict[str, Any] = {}
    if opt_out == "priority class":
        keep["priorityClassName"] = "preemption-not-allow"
    else:
        keep["annotations"] = {"yunikorn.apache.org/allow-preemption": "false"}
    report = simulate(
        {
            "name": "priority-class",
            "config": _guide(parent),
            "nodes": ROOMY,
            "priorityclasses": [
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {
                        "name": "preemption-not-allow",
                        "annotations": {"yunikorn.apache.org/allow-preemption": "false"},
                    },
                    "value": 0,
                }
            ],
            "workload": [
                pod("q1", count=8, duration=1000, labels=_in("root.priority-class.queue-1", "app-1")),
                pod("q2", count=8, duration=1000, labels=_in("root.priority-class.queue-2", "app-2"), **keep),
                pod("q3", at=5, count=8, duration=1000, labels=_in("root.priority-class.queue-3", "app-3")),
            ],
            "snapshots": [60],
            "until": 100,
        }
    )
    after = report["snapshots"]["60"]
    used = [_cores(after, f"root.priority-class.queue-{i}") for i in (1, 2, 3)]
    assert used == [5, 8, 3]
    assert len(_evicted(report)) == 3 and all(name.startswith("default/q1-") for name in _evicted(report))


def test_priority_queue_case_a_higher_offset_preempts_a_lower_offset_cannot() -> None:
    parent = _queue("priority-queue", 18)
    parent["queues"] = [
        _queue("high-priority", 10, 6, priority_offset="100"),
        _queue("normal-priority", 18, 6, priority_offset="0"),
        _queue("low-priority", 10, 6, priority_offset="-100"),
    ]
    prefix = "root.priority-queue."
    report = simulate(
        {
            "name": "priority-queue",
            "config": _guide(parent),
            "nodes": ROOMY,
            "workload": [
                pod("normal", count=6, cpu="3", duration=1000, labels=_in(prefix + "normal-priority", "normal")),
                pod("high", at=5, count=5, cpu="3", duration=1000, labels=_in(prefix + "high-priority", "high")),
                pod("low", at=5, count=5, cpu="3", duration=1000, labels=_in(prefix + "low-priority", "low")),
            ],
            "snapshots": [10, 60],
            "until": 100,
        }
    )
    before, after = report["snapshots"]["10"], report["snapshots"]["60"]
    names = ("high-priority", "normal-priority", "low-priority")
    assert [_cores(before, prefix + name) for name in names] == [0, 18, 0]
    assert [_cores(after, prefix + name) for name in names] == [6, 12, 0]
    assert len(_evicted(report)) == 2 and all(name.startswith("default/normal-") for name in _evicted(report))


def test_fence_case_a_fenced_queue_stays_inside_and_system_takes_from_both_tenants() -> None:
    # The guide's table gives `fence` a max of 3, a typo: tenant-a and tenant-b fill it with 15
    # each before system arrives, so its max is read here as 30.
    fence = _queue("fence", 30, preemption_policy="fence")
    tenant_a = _queue("tenant-a", 15, 5, preemption_policy="fence")
    tenant_a["queues"] = [_queue("queue-1", 15, 2), _queue("queue-2", 15, 2, preemption_policy="fence")]
    tenant_b = _queue("tenant-b", 15, 10, preemption_policy="fence")
    tenant_b["queues"] = [_queue("queue-3", 15, 10)]
    fence["queues"] = [tenant_a, tenant_b, _queue("system", 15, 10)]
    report = simulate(
        {
            "name": "fence",
            "config": _guide(fence),
            "nodes": ROOMY,
            "workload": [
                pod("q1", count=15, duration=1000, labels=_in("root.fence.tenant-a.queue-1", "app-1")),
                pod("q2", at=5, count=15, duration=1000, labels=_in("root.fence.tenant-a.queue-2", "app-2")),
                pod("q3", at=10, count=15, duration=1000, labels=_in("root.fence.tenant-b.queue-3", "app-3")),
                pod("sys", at=20, count=15, duration=1000, labels=_in("root.fence.system", "system")),
            ],
            "snapshots": [19, 100],
            "until": 150,
        }
    )
    paths = (
        "root.fence.tenant-a",
        "root.fence.tenant-a.queue-1",
        "root.fence.tenant-a.queue-2",
        "root.fence.tenant-b",
        "root.fence.tenant-b.queue-3",
        "root.fence.system",
    )
    before, after = report["snapshots"]["19"], report["snapshots"]["100"]
    assert [_cores(before, path) for path in paths] == [15, 15, 0, 15, 15, 0]
    assert [_cores(after, path) for path in paths] == [10, 10, 0, 10, 10, 10]
    evicted = _evicted(report)
    assert sum(name.startswith("default/q1-") for name in evicted) == 5
    assert sum(name.startswith("default/q3-") for name in evicted) == 5
    assert len(evicted) == 10  # queue-2, fenced, never takes anything from queue-1
