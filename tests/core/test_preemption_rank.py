"""Which node preemption takes its victims from, in kube-scheduler's order: rows of its
`TestSelectBestCandidate`, replayed through both of Herder's preemptions.

Every node holds 500m and the preemptor asks for 500m, so each node's victims are all the pods
on it: only the choice between nodes is on trial. Priorities as in kube-scheduler's table:
negative -100, low 0, mid 100, high 1000, very high 10000; pods are small (100m), medium (200m)
or large (300m). One node of the fourth row holds four pods of 200m + 100m + 100m + 200m in the
upstream table, more than its 500m; its last pod is small here so that the node is not
overcommitted (the row's choice does not change).
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from core.objects.disruption_budget import DisruptionBudget
from core.objects.pod_rules import LabelRequirement, LabelSelector
from tests.core.scheduling.world import World, queues_config

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE = "100m", "200m", "300m"


class Running(NamedTuple):
    priority: int
    size: str
    started: float = 0.0
    app: str = ""  # its `app` label, which the row's PodDisruptionBudget selects


class Row(NamedTuple):
    preemptor: int
    nodes: dict[str, list[Running]]
    chosen: str
    preemptor_size: str = "500m"
    budget_allows: int | None = None  # a PodDisruptionBudget on app=foo allowing this many to go


ROWS = {
    "node with min highest priority pod is picked": Row(
        HIGH,
        {
            "node1": [Running(MID, MEDIUM), Running(MID, LARGE)],
            "node2": [Running(MID, MEDIUM), Running(LOW, MEDIUM)],
            "node3": [Running(LOW, MEDIUM), Running(LOW, MEDIUM)],
        },
        "node3",
    ),
    "when highest priorities are the same, minimum sum of priorities is picked": Row(
        HIGH,
        {
            "node1": [Running(MID, MEDIUM), Running(MID, LARGE)],
            "node2": [Running(MID, LARGE), Running(LOW, MEDIUM)],
            "node3": [Running(MID, MEDIUM), Running(MID, MEDIUM)],
        },
        "node2",
    ),
    "sum of adjusted priorities is considered": Row(
        HIGH,
        {
            "node1": [Running(MID, SMALL), Running(NEG, SMALL), Running(NEG, SMALL)],
            "node2": [Running(MID, LARGE), Running(NEG, MEDIUM)],
            "node3": [Running(MID, MEDIUM), Running(NEG, SMALL), Running(LOW, SMALL)],
        },
        "node2",
    ),
    "non-overlapping lowest high priority, sum priorities, and number of pods": Row(
        VERY_HIGH,
        {
            "node1": [Running(MID, SMALL), Running(LOW, SMALL), Running(LOW, SMALL)],
            "node2": [Running(HIGH, LARGE)],
            "node3": [Running(MID, MEDIUM), Running(LOW, SMALL), Running(LOW, SMALL), Running(LOW, SMALL)],
            "node4": [Running(MID, MEDIUM), Running(MID, SMALL), Running(MID, SMALL), Running(NEG, SMALL)],
        },
        "node1",
    ),
    "same priority, same number of victims, different start time for each node's pod": Row(
        HIGH,
        {
            "node1": [Running(MID, MEDIUM, 2), Running(MID, MEDIUM, 2)],
            "node2": [Running(MID, MEDIUM, 3), Running(MID, MEDIUM, 3)],
            "node3": [Running(MID, MEDIUM, 1), Running(MID, MEDIUM, 1)],
        },
        "node2",
    ),
    "same priority, same number of victims, different start time for all pods": Row(
        HIGH,
        {
            "node1": [Running(MID, MEDIUM, 4), Running(MID, MEDIUM, 2)],
            "node2": [Running(MID, MEDIUM, 5), Running(MID, MEDIUM, 1)],
            "node3": [Running(MID, MEDIUM, 3), Running(MID, MEDIUM, 6)],
        },
        "node3",
    ),
    "different priority, same number of victims, different start time for all pods": Row(
        HIGH,
        {
            "node1": [Running(LOW, MEDIUM, 4), Running(MID, MEDIUM, 2)],
            "node2": [Running(MID, MEDIUM, 6), Running(LOW, MEDIUM, 1)],
            "node3": [Running(LOW, MEDIUM, 3), Running(MID, MEDIUM, 5)],
        },
        "node2",
    ),
}

# kube-scheduler's TestDryRunPreemption, "preemption looks past numCandidates until a non-PDB
# violating node is found": every node could make room, three only by breaking the budget.
ROWS["the node whose victims break no PodDisruptionBudget is picked"] = Row(
    HIGH,
    {
        "node1": [Running(MID, LARGE, app="foo")],
        "node2": [Running(MID, LARGE, app="foo")],
        "node3": [Running(MID, LARGE)],
        "node4": [Running(MID, LARGE)],
        "node5": [Running(MID, LARGE, app="foo")],
    },
    "node3",
    preemptor_size=LARGE,
    budget_allows=0,
)

QUEUES = queues_config(
    """
- name: prod
  resources: {guaranteed: {vcore: 1}}
- name: batch
""",
    root_properties="{preemption.delay: 10s}",
)


def _world(row: Row, config: str | None, **where: str) -> World:
    """The row's nodes and running pods (started at their start times), `where` their queue or
    namespace; the clock then stands after the last start."""
    world = World(config)
    for node in row.nodes:
        world.node(node, cpu="500m", memory="16Gi")
    if config is None:
        world.quota("team", min={"cpu": 2}, max={"cpu": 2})
    pods = sorted(((pod.started, node, i, pod) for node, pods in row.nodes.items() for i, pod in enumerate(pods)))
    for started, node, i, pod in pods:
        world.now = started
        labels = {"app": pod.app} if pod.app else None
        world.running(
            f"{node}.{i}", node, cpu=pod.size, priority=pod.priority, app=f"app-{node}", labels=labels, **where
        )
    if row.budget_allows is not None:
        world.sched.update_disruption_budget(_budget("default" if config else "team", row.budget_allows))
    world.now = 10.0
    return world


def _budget(namespace: str, allows: int, app: str = "foo") -> DisruptionBudget:
    selector = LabelSelector((LabelRequirement("app", "In", frozenset({app})),))
    return DisruptionBudget(namespace, "keep-foo", selector, allows)


def _victim_nodes(world: World) -> set[str]:
    return {allocation.node_id for allocation, _ in world.out.evictions}


@pytest.mark.parametrize("row", ROWS.values(), ids=list(ROWS))
def test_in_quota_preemption_picks_the_node_kube_scheduler_picks(row: Row) -> None:
    world = _world(row, None, namespace="team")
    world.pod("p", namespace="team", cpu=row.preemptor_size, priority=row.preemptor, app="preemptor")
    world.schedule()
    assert _victim_nodes(world) == {row.chosen}
    assert sorted(a.key for a, _ in world.out.evictions) == [
        f"{row.chosen}.{i}" for i in range(len(row.nodes[row.chosen]))
    ]
    world.finish(*(a.key for a, _ in world.out.evictions))
    assert world.schedule() == {"p": row.chosen}


@pytest.mark.parametrize("row", ROWS.values(), ids=list(ROWS))
def test_preemption_across_queues_breaks_ties_as_kube_scheduler_does(row: Row) -> None:
    world = _world(row, QUEUES, queue="root.batch")
    world.pod("p", queue="root.prod", cpu=row.preemptor_size, priority=row.preemptor, app="preemptor")
    world.schedule()
    world.schedule(advance=10)  # preemption.delay
    assert _victim_nodes(world) == {row.chosen}
    world.finish(*(a.key for a, _ in world.out.evictions))
    assert world.schedule() == {"p": row.chosen}


def test_in_quota_preemption_spares_the_pod_a_disruption_budget_protects_if_it_can() -> None:
    # As kube-scheduler reprieves the victims that would break a budget first: the protected pod
    # is of the lowest priority, yet the other one goes.
    world = World()
    world.node("n1", cpu="500m", memory="16Gi")
    world.quota("team", min={"cpu": 2}, max={"cpu": 2})
    world.running("guarded", "n1", cpu="250m", priority=LOW, namespace="team", labels={"app": "foo"})
    world.running("plain", "n1", cpu="250m", priority=MID, namespace="team")
    world.sched.update_disruption_budget(_budget("team", 0))
    world.pod("p", namespace="team", cpu="250m", priority=HIGH)
    world.schedule()
    assert world.out.evicted() == ["plain"]
    world.sched.remove_disruption_budget("team", "keep-foo")
    world.finish("plain")
    world.schedule()
    world.pod("q", namespace="team", cpu="250m", priority=HIGH)
    world.schedule()
    assert world.out.evicted() == ["plain", "guarded"]  # without the budget the lowest priority goes
