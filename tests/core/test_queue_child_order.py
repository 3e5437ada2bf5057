"""A parent keeps its children with pending requests in fair order across decisions
(`Queue.ordered_children`), repairing only the children whose share moved or that got their
first pending request or lost their last. Whatever happens between decisions, the order must be
exactly the full sort `policies.order_queues` would give those children: smallest share of its
due first, ties by name.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.objects import queue as queue_module
from core.objects import sorted_blocks
from core.objects.queue import Queue
from core.policies import order_queues
from core.resources import Resource

NAMES = [f"team-{index}" for index in range(12)]

operations = st.lists(
    st.one_of(
        st.tuples(st.just("use"), st.sampled_from(NAMES), st.integers(-3, 4)),
        st.tuples(st.just("ask"), st.sampled_from(NAMES), st.integers(1, 3)),
        st.tuples(st.just("place"), st.sampled_from(NAMES), st.just(1)),
        st.tuples(st.just("drop"), st.sampled_from(NAMES), st.just(0)),
        st.tuples(st.just("guarantee"), st.sampled_from(NAMES), st.integers(0, 8)),  # 0: an empty guarantee
        st.tuples(st.just("max"), st.sampled_from(NAMES), st.integers(0, 8)),
        st.tuples(st.just("add"), st.sampled_from(NAMES), st.just(0)),
        st.tuples(st.just("remove"), st.sampled_from(NAMES), st.just(0)),
        st.tuples(st.just("resize"), st.just(""), st.integers(8, 64)),
        st.tuples(st.just("decide"), st.just(""), st.just(0)),
    ),
    max_size=60,
)


def _child(parent: Queue, name: str) -> Queue:
    queue = Queue(name, parent, leaf=True, managed=False)
    parent.add_child(queue)
    return queue


def _waiting_child(parent: Queue, name: str) -> Queue:
    """A child with a pending request of one core (only those are in the order)."""
    queue = _child(parent, name)
    queue.add_pending({"vcore": 1000})
    return queue


@settings(max_examples=150, deadline=None)
@given(operations, st.sampled_from([None, 2]))
def test_kept_order_is_always_the_full_sort(steps: list[tuple[str, str, int]], block: int | None) -> None:
    """`block` 2: parents past 2 children keep their order in blocks of 2-4 (SortedBlocks)."""
    saved = queue_module.BLOCK, sorted_blocks.BLOCK
    if block is not None:
        queue_module.BLOCK = sorted_blocks.BLOCK = block
    try:
        _kept_order(steps)
    finally:
        queue_module.BLOCK, sorted_blocks.BLOCK = saved


def _kept_order(steps: list[tuple[str, str, int]]) -> None:
    root = Queue("root", None, leaf=False, managed=True)
    parent = _child(root, "dept")
    parent.is_leaf = False
    for name in NAMES[:6]:
        _child(parent, name).add_pending({"vcore": 1})
    cluster: dict[str, int] = {"vcore": 32}
    for action, name, amount in steps:
        child = parent.children.get(name)
        if action == "use" and child is not None:
            used = child.allocated.get("vcore", 0)
            delta = max(amount, -used)  # usage never goes below zero
            if delta:
                child.add_allocated({"vcore": delta})
        elif action == "ask" and child is not None:
            child.add_pending({"vcore": amount})
        elif action == "place" and child is not None and child.pending:
            child.start_pending({"vcore": 1})  # a pending request placed: pending to allocated
        elif action == "drop" and child is not None and child.pending:
            child.add_pending(dict(child.pending), -1)  # every pending request removed
        elif action == "guarantee" and child is not None:
            child.guaranteed = Resource({"vcore": amount} if amount else {})
        elif action == "max" and child is not None:
            child.max = Resource({"vcore": amount}) if amount else None
        elif action == "add" and child is None:
            _child(parent, name)
        elif action == "remove" and child is not None:
            parent.remove_child(child)
        elif action == "resize":
            cluster = {"vcore": amount}  # a node change replaces the partition's capacity map
        elif action == "decide":
            list(parent.ordered_children(cluster))
        pending = [child for child in parent.children.values() if child.pending]
        expected = order_queues(pending, cluster)
        assert list(parent.ordered_children(cluster)) == expected
        # and the shares themselves, against a sum made here from scratch
        fresh = sorted(pending, key=lambda queue: (_fresh_share(queue, cluster), queue.name))
        assert expected == fresh


def _fresh_share(queue: Queue, cluster: dict[str, int]) -> float:
    """The dominant share of what the queue uses over its guaranteed, else max, else the cluster."""
    due: dict[str, int] = dict(queue.guaranteed or queue.max or cluster)
    return max(
        (used / (due.get(key) or cluster.get(key) or 0) for key, used in queue.allocated.items() if used > 0),
        default=0.0,
    )


def test_a_placement_moves_the_child_behind_its_siblings() -> None:
    root = Queue("root", None, leaf=False, managed=True)
    a, b, c = (_waiting_child(root, name) for name in ("a", "b", "c"))
    cluster = {"vcore": 30}
    assert list(root.ordered_children(cluster)) == [a, b, c]
    a.add_allocated({"vcore": 2})
    assert list(root.ordered_children(cluster)) == [b, c, a]
    b.add_allocated({"vcore": 1})
    assert list(root.ordered_children(cluster)) == [c, b, a]


def test_only_children_with_pending_requests_are_in_the_order() -> None:
    """A child enters its parent's order with its first pending request and leaves it when its
    last is placed or removed, wherever its share puts it."""
    root = Queue("root", None, leaf=False, managed=True)
    a, b, c = (_child(root, name) for name in ("a", "b", "c"))
    cluster = {"vcore": 30}
    a.add_allocated({"vcore": 3})
    assert list(root.ordered_children(cluster)) == []
    a.add_pending({"vcore": 2})
    c.add_pending({"vcore": 1})
    assert list(root.ordered_children(cluster)) == [c, a]
    b.add_pending({"vcore": 1})
    assert list(root.ordered_children(cluster)) == [b, c, a]
    c.start_pending({"vcore": 1})  # its only request placed: c now uses 1 of 30, a 3
    assert list(root.ordered_children(cluster)) == [b, a]
    a.add_pending({"vcore": 2}, -1)  # a's request removed
    b.add_pending({"vcore": 4})
    assert list(root.ordered_children(cluster)) == [b]


def test_a_child_whose_guaranteed_or_max_is_set_moves_in_its_parents_order() -> None:
    """Setting a queue's guaranteed or max (a config reload, a namespace annotation) moves it in
    its parent's kept order at once: nothing else re-sorts the children."""
    root = Queue("root", None, leaf=False, managed=True)
    a, b, c = (_waiting_child(root, name) for name in ("a", "b", "c"))
    cluster = {"vcore": 32}
    a.add_allocated({"vcore": 4})
    b.add_allocated({"vcore": 2})
    assert list(root.ordered_children(cluster)) == [c, b, a]
    b.guaranteed = Resource({"vcore": 1})  # 2 of 1 guaranteed: ahead of a's 4 of 32
    assert list(root.ordered_children(cluster)) == [c, a, b]
    b.guaranteed = None
    assert list(root.ordered_children(cluster)) == [c, b, a]
    b.max = Resource({"vcore": 1})
    assert list(root.ordered_children(cluster)) == [c, a, b]


def test_a_leaf_follows_its_parents_sort_properties_when_they_change() -> None:
    root = Queue("root", None, leaf=False, managed=True)
    team = Queue("team", root, leaf=True, managed=True)
    root.add_child(team)
    assert (team.app_sort_policy, team.app_sort_priority) == ("fifo", True)
    root.properties = {"application.sort.policy": "fair", "application.sort.priority": "disabled"}
    assert (team.app_sort_policy, team.app_sort_priority) == ("fair", False)
    team.properties = {"application.sort.policy": "fifo"}  # its own value wins over the parent's
    assert (team.app_sort_policy, team.app_sort_priority) == ("fifo", False)


def test_shares_follow_the_clusters_size_as_nodes_come_and_go() -> None:
    """Queues without guaranteed or max take their share of the cluster: when the cluster
    shrinks, one using 4 of 32 cores (1/8) passes one using 2 of its guaranteed 8 (1/4)."""
    root = Queue("root", None, leaf=False, managed=True)
    busy, guaranteed, idle = (_waiting_child(root, name) for name in ("busy", "guaranteed", "idle"))
    guaranteed.guaranteed = Resource({"vcore": 8})
    busy.add_allocated({"vcore": 4})
    guaranteed.add_allocated({"vcore": 2})
    assert list(root.ordered_children({"vcore": 32})) == [idle, busy, guaranteed]
    assert list(root.ordered_children({"vcore": 8})) == [idle, guaranteed, busy]
    assert busy.usage_share({"vcore": 8}) == 0.5 and busy.usage_share({"vcore": 64}) == 0.0625
