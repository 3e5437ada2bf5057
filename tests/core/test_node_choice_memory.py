"""The node index remembers its choice per pod shape between decisions; whatever happens to the
nodes in between, it must pick exactly the node a full pass over every node would pick, ties
included (the fewest PreferNoSchedule taints the pod does not tolerate, then the first name).
The same holds for a shape confined to some domains of a label (a gang's rack, `select_within`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import given, settings
from hypothesis import strategies as st

from core.objects import node_choice
from core.objects.ask import Allocation
from core.objects.constraints import PREFER_NO_SCHEDULE, NodeConstraints, Taint, Toleration
from core.objects.node import Node
from core.objects.node_index import BINPACKING, FAIR, NodeIndex, static_mismatch
from core.objects.node_info import NodeInfo
from core.resources import Resource

KEYS = ("vcore", "memory", "pods", "nvidia.com/gpu")
SHAPES = [
    Resource({"vcore": 500, "memory": 1, "pods": 1}),
    Resource({"vcore": 1000, "memory": 2, "pods": 1}),
    Resource({"vcore": 3000, "memory": 4, "pods": 1}),
    Resource({"vcore": 1000, "pods": 1, "nvidia.com/gpu": 1}),
    Resource({"vcore": 0, "pods": 1}),
]
SPOT = Taint("spot", "", PREFER_NO_SCHEDULE)
OLD = Taint("old", "", PREFER_NO_SCHEDULE)
TOLERATES_SPOT = (Toleration("spot", "Exists", "", PREFER_NO_SCHEDULE),)
RACK = "rack"
# a gang's domains: one rack, two racks, a rack no node is in
DOMAINS = [frozenset({"r0"}), frozenset({"r1"}), frozenset({"r0", "r2"}), frozenset({"r9"})]
CONSTRAINTS = [
    NodeConstraints(),
    NodeConstraints(node_selector=(("zone", "a"),)),
    NodeConstraints(tolerations=TOLERATES_SPOT),  # ties go another way than the columns' order
    NodeConstraints(node_selector=(("zone", "b"),), tolerations=TOLERATES_SPOT),
]


def untolerated(node: Node, constraints: NodeConstraints) -> int:
    return sum(
        1
        for taint in node.info.taints
        if taint.effect == PREFER_NO_SCHEDULE and not any(tol.tolerates(taint) for tol in constraints.tolerations)
    )


def oracle(nodes: dict[str, Node], policy: str, request: Resource, constraints: NodeConstraints) -> str | None:
    """The documented rule, node by node: the fitting node with the highest usage share
    (binpacking) or lowest (fair), ties to the fewest PreferNoSchedule taints the pod does not
    tolerate, then to the first name."""
    best: tuple[tuple[float, int], str] | None = None
    for name in sorted(nodes):
        node = nodes[name]
        if static_mismatch(node, constraints) is not None:
            continue
        available = node.available()
        if any(amount > 0 and available.get(key, 0) < amount for key, amount in request.items()):
            continue
        shares = [
            (node.allocated.get(key, 0) + node.occupied.get(key, 0)) / capacity
            for key in ("vcore", "memory")
            if (capacity := node.info.capacity.get(key, 0)) > 0
        ]
        share = sum(shares) / len(shares) if shares else 0.0
        rank = (share if policy == BINPACKING else -share, -untolerated(node, constraints))
        if best is None or rank > best[0]:
            best = (rank, name)
    return best[1] if best else None


# Few flavours, so nodes tie often and the first name must win.
FLAVOURS = [
    Resource({"vcore": 4000, "memory": 8, "pods": 4}),
    Resource({"vcore": 8000, "memory": 16, "pods": 6}),
    Resource({"vcore": 8000, "memory": 16, "pods": 6, "nvidia.com/gpu": 2}),
]
node_infos = st.builds(
    lambda i, capacity, zone, taints, rack: NodeInfo(
        node_id=f"n{i:02d}",
        capacity=capacity,
        labels={"zone": zone, **({RACK: rack} if rack else {})},
        taints=taints,
    ),
    st.integers(0, 39),
    st.sampled_from(FLAVOURS),
    st.sampled_from(["a", "b"]),
    st.sampled_from([(), (), (SPOT,), (OLD,), (SPOT, OLD)]),
    st.sampled_from(["r0", "r1", "r2", ""]),  # "": no rack label
)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("place"), st.integers(0, len(SHAPES) - 1), st.integers(0, len(CONSTRAINTS) - 1)),
        st.tuples(st.just("probe"), st.integers(0, len(SHAPES) - 1), st.integers(0, len(CONSTRAINTS) - 1)),
        st.tuples(
            st.just("within"), st.integers(0, len(SHAPES) - 1), st.integers(0, len(CONSTRAINTS) * len(DOMAINS) - 1)
        ),
        st.tuples(st.just("release"), st.integers(0, 10_000), st.just(0)),
        st.tuples(st.just("foreign"), st.integers(0, 39), st.integers(0, len(SHAPES) - 1)),
        st.tuples(st.just("node"), st.just(0), st.just(0)),
    ),
    max_size=150,
)


@contextmanager
def remembering(count: int) -> Iterator[None]:
    """Fewer remembered nodes than the default, so that small clusters run out of them."""
    default = node_choice.REMEMBERED
    node_choice.REMEMBERED = count
    try:
        yield
    finally:
        node_choice.REMEMBERED = default


@settings(max_examples=400, deadline=None)
@given(
    st.lists(node_infos, min_size=1, max_size=40),
    steps,
    st.sampled_from([BINPACKING, FAIR]),
    st.sampled_from([1, 2, 3, node_choice.REMEMBERED]),
    st.data(),
)
def test_remembered_choice_is_always_the_full_pass_choice(
    infos: list[NodeInfo], plan: list[tuple[str, int, int]], policy: str, remembered: int, data: st.DataObject
) -> None:
    with remembering(remembered):
        check_against_full_pass(infos, plan, policy, data)


def check_against_full_pass(
    infos: list[NodeInfo], plan: list[tuple[str, int, int]], policy: str, data: st.DataObject
) -> None:
    index = NodeIndex(policy)
    nodes: dict[str, Node] = {}
    for info in infos:
        nodes[info.node_id] = Node(info)
        index.put(nodes[info.node_id])
    placed: list[Allocation] = []
    for serial, (action, a, b) in enumerate(plan):
        if action in ("place", "probe", "within"):
            if action == "within":  # placed when it fits, as a gang's placeholder
                request, constraints, domains = (
                    SHAPES[a],
                    CONSTRAINTS[b % len(CONSTRAINTS)],
                    DOMAINS[b // len(CONSTRAINTS)],
                )
                chosen = index.select_within(request, constraints, RACK, domains)
                assert chosen == oracle(inside(nodes, domains), policy, request, constraints)
            else:
                request, constraints = SHAPES[a], CONSTRAINTS[b]
                chosen = index.select(request, constraints)
                assert chosen == oracle(nodes, policy, request, constraints)
            if chosen is not None and action != "probe":
                allocation = Allocation(key=f"p{serial}", node_id=chosen, resource=request)
                nodes[chosen].add(allocation)
                index.refresh(nodes[chosen])
                placed.append(allocation)
        elif action == "release" and placed:
            allocation = placed.pop(a % len(placed))
            if allocation.node_id in nodes:
                nodes[allocation.node_id].remove(allocation.key)
                index.refresh(nodes[allocation.node_id])
        elif action == "foreign" and f"n{a:02d}" in nodes:
            node = nodes[f"n{a:02d}"]
            node.add(Allocation(key=f"f{serial}", node_id=node.node_id, resource=SHAPES[b], foreign="default"))
            index.refresh(node)
        elif action == "node":
            info = data.draw(node_infos)
            if info.node_id in nodes:
                nodes[info.node_id].info = info
            else:
                nodes[info.node_id] = Node(info)
            index.put(nodes[info.node_id])
    for request in SHAPES:
        for constraints in CONSTRAINTS:
            assert index.select(request, constraints) == oracle(nodes, policy, request, constraints)
            for domains in DOMAINS:
                expected = oracle(inside(nodes, domains), policy, request, constraints)
                assert index.select_within(request, constraints, RACK, domains) == expected


def inside(nodes: dict[str, Node], domains: frozenset[str]) -> dict[str, Node]:
    """The nodes whose rack is one of `domains`."""
    return {name: node for name, node in nodes.items() if node.info.labels.get(RACK) in domains}


def cluster(policy: str, count: int = 20) -> tuple[NodeIndex, list[Node]]:
    index = NodeIndex(policy)
    nodes = [Node(NodeInfo(node_id=f"n{i:02d}", capacity=FLAVOURS[0])) for i in range(count)]
    for node in nodes:
        index.put(node)
    return index, nodes


def occupy(index: NodeIndex, node: Node, key: str, vcore: int) -> None:
    node.add(Allocation(key=key, node_id=node.node_id, resource=Resource({"vcore": vcore}), foreign="default"))
    index.refresh(node)


def test_a_node_freed_to_tie_with_the_choice_wins_by_its_name() -> None:
    index, nodes = cluster(FAIR)
    for node in nodes[:5]:
        occupy(index, node, f"x-{node.node_id}", 1000)
    small = Resource({"vcore": 500})
    assert index.select(small, NodeConstraints()) == "n05"  # the first empty node
    nodes[2].remove("x-n02")
    index.refresh(nodes[2])
    assert index.select(small, NodeConstraints()) == "n02"  # as empty, and first by name


def test_a_changed_node_that_still_does_not_fit_is_never_chosen() -> None:
    index, nodes = cluster(BINPACKING)
    too_big = Resource({"vcore": 3500})
    for node in nodes:
        occupy(index, node, f"x-{node.node_id}", 1000)
    assert index.select(too_big, NodeConstraints()) is None
    occupy(index, nodes[3], "y", 500)
    assert index.select(too_big, NodeConstraints()) is None
    nodes[7].remove("x-n07")
    index.refresh(nodes[7])
    assert index.select(too_big, NodeConstraints()) == "n07"


def test_the_choice_filled_past_the_request_gives_way_to_the_next_best() -> None:
    index, nodes = cluster(BINPACKING)
    occupy(index, nodes[4], "a", 2000)
    occupy(index, nodes[9], "b", 1000)
    pod = Resource({"vcore": 1500})
    assert index.select(pod, NodeConstraints()) == "n04"
    occupy(index, nodes[4], "c", 1000)  # n04 now has 1000 left
    assert index.select(pod, NodeConstraints()) == "n09"
