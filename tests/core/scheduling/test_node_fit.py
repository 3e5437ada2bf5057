"""Where a pod may go: room (resources and pod count, foreign pods included), node state,
selectors, required affinity, taints; which fitting node wins; and the reason when none fits."""

from __future__ import annotations

import pytest

from core.objects.constraints import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, NodeSelectorTerm, Taint, Toleration
from tests.core.scheduling.world import World, affinity

FAIR = """
partitions:
  - name: default
    nodesortpolicy: {type: fair%s}
    queues: [{name: root, submitacl: '*', queues: [{name: default}]}]
"""


def test_a_pod_goes_only_where_it_fits() -> None:
    world = World()
    world.node("small", cpu=1, memory="1Gi")
    world.node("big", cpu=4, memory="8Gi")
    world.pod("p1", cpu=2, memory="2Gi")
    assert world.schedule() == {"p1": "big"}


def test_the_pod_count_of_a_node_is_a_limit() -> None:
    world = World()
    world.node("n1", cpu=64, pods=2)
    world.pods(3, cpu=0.1, memory="1Mi")
    assert len(world.schedule()) == 2
    assert world.reason("p2") == "queue root would exceed the cluster size pods: 2 allocated + 1 asked > 2"


def test_foreign_pods_take_room_but_count_nowhere_else() -> None:
    world = World()
    world.node("n1", cpu=4)
    world.foreign("kube-proxy", "n1", cpu=3.5, static=True)
    world.pod("p1", cpu=1)
    assert world.schedule() == {}
    assert world.reason("p1") == "no node fits: 1 insufficient vcore"
    node = world.node_doc("n1")
    assert node["occupied"]["vcore"] == 3500 and node["allocated"] == {"memory": 0, "pods": 0, "vcore": 0}
    assert [a["allocationTags"] for a in node["foreignAllocations"]] == [{"foreign": "static"}]
    assert world.allocated("root") == {}
    world.finish("kube-proxy")
    assert world.schedule() == {"p1": "n1"}


@pytest.mark.parametrize(
    ("state", "why"), [({"schedulable": False}, "node unschedulable"), ({"ready": False}, "node not ready")]
)
def test_cordoned_and_not_ready_nodes_take_no_new_pods(state: dict[str, bool], why: str) -> None:
    world = World()
    world.node("n1", **state)  # type: ignore[arg-type]
    world.pod("p1")
    assert world.schedule() == {}
    assert world.reason("p1") == f"no node fits: 1 {why}"
    world.node("n1")  # uncordoned / ready again
    assert world.schedule() == {"p1": "n1"}


def test_a_cordoned_node_keeps_its_pods() -> None:
    world = World()
    world.node("n1")
    world.pod("p1")
    world.schedule()
    world.node("n1", schedulable=False)
    assert world.node_of("p1") == "n1"
    assert world.node_doc("n1")["allocated"]["pods"] == 1


def test_node_selector_picks_labelled_nodes() -> None:
    world = World()
    world.node("plain")
    world.node("ssd", labels={"disk": "ssd"})
    world.pod("p1", selector={"disk": "ssd"})
    world.pod("p2", selector={"disk": "nvme"})
    assert world.schedule() == {"p1": "ssd"}
    assert world.reason("p2") == "no node fits: 2 node selector mismatch"


LABELS = {
    "a": {"zone": "z1", "gen": "3"},
    "b": {"zone": "z2", "gen": "5", "gpu": "yes"},
    "c": {"zone": "z3"},
}


@pytest.mark.parametrize(
    ("requirement", "nodes"),
    [
        (("zone", "In", ("z1", "z2")), {"a", "b"}),
        (("zone", "NotIn", ("z1",)), {"b", "c"}),
        (("gpu", "Exists", ()), {"b"}),
        (("gpu", "DoesNotExist", ()), {"a", "c"}),
        (("gen", "Gt", ("4",)), {"b"}),
        (("gen", "Lt", ("4",)), {"a"}),
        (("gen", "NotIn", ("3",)), {"b", "c"}),
    ],
)
def test_required_node_affinity_operators(requirement: tuple[str, str, tuple[str, ...]], nodes: set[str]) -> None:
    world = World()
    for name, labels in LABELS.items():
        world.node(name, cpu=1, memory="1Gi", pods=1, labels=labels)
    world.pods(3, cpu=1, memory="1Gi", required=affinity([requirement]))
    assert set(world.schedule().values()) == nodes


def test_affinity_terms_are_ored_and_requirements_anded() -> None:
    world = World()
    for name, labels in LABELS.items():
        world.node(name, cpu=1, memory="1Gi", pods=1, labels=labels)
    terms = affinity([("zone", "In", ("z1",)), ("gen", "Gt", ("4",))], [("zone", "In", ("z3",))])
    world.pods(3, cpu=1, memory="1Gi", required=terms)
    assert set(world.schedule().values()) == {"c"}
    assert (
        world.reason("p1")
        == "no node fits: 2 node affinity mismatch, 1 insufficient memory, 1 insufficient pods, 1 insufficient vcore"
    )


def test_an_empty_affinity_term_matches_no_node() -> None:
    world = World()
    world.node("n1")
    world.pod("p1", required=(NodeSelectorTerm(()),))
    assert world.schedule() == {}
    assert world.reason("p1") == "no node fits: 1 node affinity mismatch"


def test_taints_keep_pods_that_do_not_tolerate_them_away() -> None:
    world = World()
    world.node("gpu", taints=[Taint("dedicated", "gpu", NO_SCHEDULE)])
    world.node("gone", taints=[Taint("evicting", "", NO_EXECUTE)])
    world.pod("plain")
    assert world.schedule() == {}
    assert world.reason("plain") == "no node fits: 1 taint dedicated=gpu, 1 taint evicting"
    world.pod("tolerant", tolerations=[Toleration("dedicated", "Equal", "gpu", NO_SCHEDULE)])
    world.pod("anything", tolerations=[Toleration("", "Exists")])
    world.pod("wrong-value", tolerations=[Toleration("dedicated", "Equal", "cpu")])
    placed = world.schedule()
    assert placed["tolerant"] == "gpu"
    assert "anything" in placed
    assert "wrong-value" not in placed


def test_prefer_no_schedule_is_only_a_preference() -> None:
    world = World()
    world.node("n1", taints=[Taint("spot", "true", PREFER_NO_SCHEDULE)])
    world.pod("p1")
    assert world.schedule() == {"p1": "n1"}


def test_binpacking_fills_the_fullest_node_first() -> None:
    world = World()
    for name in ("n1", "n2", "n3"):
        world.node(name, cpu=4, memory="4Gi")
    world.pods(6, cpu=1, memory="512Mi")
    world.schedule()
    nodes = [world.node_of(f"p{i}") for i in range(6)]
    assert nodes == ["n1"] * 4 + ["n2"] * 2


def test_fair_spreads_pods_over_nodes() -> None:
    world = World(FAIR % "")
    for name in ("n1", "n2", "n3"):
        world.node(name, cpu=4, memory="4Gi")
    world.pods(6, cpu=1, memory="512Mi")
    world.schedule()
    counts = [world.node_doc(n)["allocated"]["pods"] for n in ("n1", "n2", "n3")]
    assert counts == [2, 2, 2]


def test_resource_weights_decide_which_usage_counts() -> None:
    world = World(FAIR % ", resourceweights: {vcore: 0, memory: 1}")
    world.node("cpu-busy", cpu=4, memory="4Gi")
    world.node("mem-busy", cpu=4, memory="4Gi")
    world.foreign("f1", "cpu-busy", cpu=3, memory="0")
    world.foreign("f2", "mem-busy", cpu=0, memory="3Gi")
    world.pod("p1", cpu=0.5, memory="256Mi")
    assert world.schedule() == {"p1": "cpu-busy"}  # only memory weighs: cpu-busy is the emptiest


def test_required_rules_herder_cannot_honour_keep_the_pod_pending() -> None:
    world = World()
    world.node("n1")
    world.pod("p1", unsupported_required=["pod anti-affinity on hostname", "topology spread on zone"])
    assert world.schedule() == {}
    assert world.reason("p1") == (
        "Herder cannot honour required rules: pod anti-affinity on hostname, topology spread on zone"
    )


def test_preferred_rules_herder_ignores_are_said_in_an_event() -> None:
    world = World()
    world.node("n1")
    world.pod("p1", unsupported_preferred=["preferred pod affinity on zone"])
    assert world.schedule() == {"p1": "n1"}
    said = [e for e in world.out.events if e.object_id == "p1" and "preferred pod affinity on zone" in e.message]
    assert said, "placing a pod while ignoring its preferences must say so"


def test_extended_resources_go_only_to_nodes_that_have_them() -> None:
    world = World()
    world.node("cpu-only", cpu=16)
    world.node("gpu", cpu=4, **{"nvidia.com/gpu": 2})
    world.pods(3, prefix="trainer", cpu=1, **{"nvidia.com/gpu": 1})
    world.pod("web", cpu=1)
    placed = world.schedule()
    assert placed == {"trainer0": "gpu", "trainer1": "gpu", "web": "gpu"}
    assert (
        world.reason("trainer2") == "queue root would exceed the cluster size nvidia.com/gpu: 2 allocated + 1 asked > 2"
    )


def test_a_config_change_switches_the_node_sort_policy() -> None:
    world = World(FAIR % "")
    for name in ("n1", "n2"):
        world.node(name, cpu=4, memory="4Gi")
    world.pods(2, cpu=1, memory="512Mi")
    world.schedule()
    assert {world.node_of("p0"), world.node_of("p1")} == {"n1", "n2"}
    world.configure((FAIR % "").replace("type: fair", "type: binpacking"))
    world.pods(2, prefix="q", cpu=1, memory="512Mi")
    world.schedule()
    assert world.node_of("q0") == world.node_of("q1")
