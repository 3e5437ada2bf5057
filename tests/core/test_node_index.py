"""Node fit and node order: resources, cordon/readiness, selectors, affinity, taints, policies."""

import numpy as np

from core.objects.ask import Allocation
from core.objects.constraints import (
    NodeConstraints,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Taint,
    Toleration,
)
from core.objects.node import Node
from core.objects.node_index import BINPACKING, FAIR, NodeIndex
from core.objects.node_info import NodeInfo
from core.resources import Resource

CAP = Resource({"vcore": 4000, "memory": 8 * 2**30, "pods": 10})


def make(policy: str = BINPACKING, **infos: NodeInfo) -> tuple[NodeIndex, dict[str, Node]]:
    index = NodeIndex(policy)
    nodes = {}
    for name, info in infos.items():
        node = Node(info)
        nodes[name] = node
        index.put(node)
    return index, nodes


def info(name: str, **kw: object) -> NodeInfo:
    return NodeInfo(node_id=name, capacity=kw.pop("capacity", CAP), **kw)  # type: ignore[arg-type]


def place(index: NodeIndex, node: Node, key: str, res: dict[str, int], foreign: str | None = None) -> None:
    node.add(Allocation(key=key, node_id=node.node_id, resource=Resource(res), foreign=foreign))
    index.refresh(node)


def test_binpacking_fills_the_fullest_node_that_still_fits() -> None:
    index, nodes = make(a=info("a"), b=info("b"))
    index.select(Resource({"vcore": 1}), NodeConstraints())  # build
    place(index, nodes["b"], "p1", {"vcore": 3000, "pods": 1})
    assert index.select(Resource({"vcore": 1000, "pods": 1}), NodeConstraints()) == "b"
    assert index.select(Resource({"vcore": 1500, "pods": 1}), NodeConstraints()) == "a"


def test_fair_spreads_to_the_emptiest_node() -> None:
    index, nodes = make(FAIR, a=info("a"), b=info("b"))
    index.select(Resource({"vcore": 1}), NodeConstraints())
    place(index, nodes["a"], "p1", {"vcore": 1000, "pods": 1})
    assert index.select(Resource({"vcore": 1000, "pods": 1}), NodeConstraints()) == "b"


def test_foreign_pods_take_room_on_their_node() -> None:
    index, nodes = make(a=info("a"))
    place(index, nodes["a"], "f1", {"vcore": 3500, "pods": 1}, foreign="default")
    assert index.select(Resource({"vcore": 1000}), NodeConstraints()) is None
    assert nodes["a"].occupied == {"vcore": 3500, "pods": 1} and nodes["a"].allocated == {}
    assert "1 insufficient vcore" in index.explain(Resource({"vcore": 1000}), NodeConstraints())


def test_pod_count_is_a_resource() -> None:
    index, nodes = make(a=info("a", capacity=Resource({"vcore": 4000, "pods": 1})))
    place(index, nodes["a"], "p", {"pods": 1})
    assert index.select(Resource({"pods": 1}), NodeConstraints()) is None


def test_cordoned_and_not_ready_nodes_take_nothing() -> None:
    index, _ = make(a=info("a", schedulable=False), b=info("b", ready=False))
    assert index.select(Resource({"vcore": 1}), NodeConstraints()) is None
    reason = index.explain(Resource({"vcore": 1}), NodeConstraints())
    assert "1 node unschedulable" in reason and "1 node not ready" in reason


def test_node_selector_and_required_affinity() -> None:
    index, _ = make(
        a=info("a", labels={"zone": "x", "gpu": "2"}),
        b=info("b", labels={"zone": "y", "gpu": "8"}),
    )
    selector = NodeConstraints(node_selector=(("zone", "y"),))
    assert index.select(Resource({"vcore": 1}), selector) == "b"
    many_gpus = NodeConstraints(required_terms=(NodeSelectorTerm((NodeSelectorRequirement("gpu", "Gt", ("4",)),)),))
    assert index.select(Resource({"vcore": 1}), many_gpus) == "b"
    by_name = NodeConstraints(
        required_terms=(NodeSelectorTerm((NodeSelectorRequirement("metadata.name", "In", ("a",), field=True),)),)
    )
    assert index.select(Resource({"vcore": 1}), by_name) == "a"
    nowhere = NodeConstraints(required_terms=(NodeSelectorTerm((NodeSelectorRequirement("zone", "DoesNotExist"),)),))
    assert index.select(Resource({"vcore": 1}), nowhere) is None
    assert index.explain(Resource({"vcore": 1}), nowhere) == "no node fits: 2 node affinity mismatch"


def test_taints_need_tolerations() -> None:
    gpu = Taint("dedicated", "gpu", "NoSchedule")
    index, _ = make(a=info("a", taints=(gpu,)), b=info("b", taints=(Taint("soft", "", "PreferNoSchedule"),)))
    assert index.select(Resource({"vcore": 1}), NodeConstraints()) == "b"
    tolerant = NodeConstraints(tolerations=(Toleration("dedicated", "Equal", "gpu", "NoSchedule"),))
    assert index.select(Resource({"vcore": 1}), tolerant) == "a"  # both allowed now; tie -> first name
    wildcard = Toleration(operator="Exists")
    assert wildcard.tolerates(gpu)
    assert not Toleration("dedicated", "Equal", "cpu").tolerates(gpu)
    index2, _ = make(a=info("a", taints=(gpu,)), c=info("c", taints=(gpu,)))
    assert index2.explain(Resource({"vcore": 1}), NodeConstraints()) == "no node fits: 2 taint dedicated=gpu"


def test_unknown_resource_never_fits() -> None:
    index, _ = make(a=info("a"))
    assert index.select(Resource({"nvidia.com/gpu": 1}), NodeConstraints()) is None
    assert "insufficient nvidia.com/gpu" in index.explain(Resource({"nvidia.com/gpu": 1}), NodeConstraints())


def test_ties_go_to_the_first_name_and_capacity_changes_are_seen() -> None:
    index, nodes = make(b=info("b"), a=info("a"))
    assert index.select(Resource({"vcore": 1}), NodeConstraints()) == "a"
    nodes["a"].info = info("a", capacity=Resource({"vcore": 10}))
    index.put(nodes["a"])
    assert index.select(Resource({"vcore": 100}), NodeConstraints()) == "b"
    index.remove("b")
    assert index.select(Resource({"vcore": 100}), NodeConstraints()) is None


def test_domain_runs_sum_each_domain_over_its_own_nodes_only() -> None:
    racks = {"a": "r2", "b": "r1", "c": None, "d": "r2", "e": "r0", "f": None}
    index, _ = make(
        **{
            name: info(name, labels={"rack": rack} if rack else {}, capacity=Resource({"vcore": 1000 * (i + 1)}))
            for i, (name, rack) in enumerate(racks.items())
        }
    )
    codes, known = index.domains("rack")
    runs = index.domain_runs("rack")
    values = np.array([2**60 + pos for pos in range(index.size)], dtype=np.int64)  # a float would round these
    expected = [sum(int(values[pos]) for pos in range(index.size) if codes[pos] == code) for code in known.values()]
    assert runs.sums(values).tolist() == expected  # the unlabelled nodes c and f in no domain
    room, rows = index.room()
    by_rack = dict(zip(known, runs.sums(room)[rows["vcore"]].tolist(), strict=True))
    assert by_rack == {"r2": 1000 + 4000, "r1": 2000, "r0": 5000}
    assert make(a=info("a"))[0].domain_runs("rack").sums(np.zeros((2, 1), dtype=np.int64)).shape == (2, 0)
