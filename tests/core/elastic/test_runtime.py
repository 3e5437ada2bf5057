"""Runtime shares, incremental recompute, admission, recycler and validation behaviour."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.config.settings import Settings
from core.elastic.manager import ElasticQuotaManager, QuotaValidationError
from core.elastic.shares import QuotaTree, distribute
from core.elastic.spec import ElasticQuotaSpec
from core.resources import Resource

GPU = "nvidia.com/gpu"


def test_scarce_gpus_go_one_each_to_the_first_borrowers_by_name() -> None:
    names = [f"q{i}" for i in range(10)]
    shares = distribute(3, dict.fromkeys(names, 0), dict.fromkeys(names, 5), dict.fromkeys(names, 1), True)
    assert sum(shares.values()) == 3
    assert [n for n in names if shares[n]] == ["q0", "q1", "q2"]


def test_zero_weight_never_borrows() -> None:
    shares = distribute(100, {"a": 10, "b": 10}, {"a": 50, "b": 80}, {"a": 0, "b": 1}, True)
    assert shares == {"a": 10, "b": 80}


def test_mins_scale_down_when_pool_is_short() -> None:
    shares = distribute(10, {"a": 10, "b": 10}, {"a": 10, "b": 10}, {"a": 1, "b": 1}, True)
    assert shares == {"a": 5, "b": 5}


def test_surplus_of_a_capped_borrower_is_shared_by_exact_proportion_not_rounded_twice() -> None:
    # pool 18; mins give c0 3, c1 1, c2 2 and leave 12 for c1 (room 2, weight 4), c2 (room 22,
    # weight 5) and c4 (room 18, weight 4). c1 is capped at its room; the 10 left split 5:4 is
    # 5.56 and 4.44, so c2 gets 6 and c4 4. Rounding each re-sharing round on its own would give
    # c4 a unit more than its exact share (c2 7, c4 5).
    shares = distribute(
        18,
        {"c0": 3, "c1": 1, "c2": 2, "c3": 0, "c4": 0},
        {"c0": 27, "c1": 3, "c2": 24, "c3": 6, "c4": 18},
        {"c0": 0, "c1": 4, "c2": 5, "c3": 0, "c4": 4},
        True,
    )
    assert shares == {"c0": 3, "c1": 3, "c2": 8, "c3": 0, "c4": 4}


def _manager(total: int = 100) -> ElasticQuotaManager:
    manager = ElasticQuotaManager(Settings(recycle_delay=10.0))
    manager.set_cluster_total(Resource({GPU: total}))
    return manager


def test_idle_capacity_is_lent_and_recycled_after_the_delay() -> None:
    manager = _manager(10)
    manager.update_quota(ElasticQuotaSpec("a", "a", Resource({GPU: 5}), Resource({GPU: 10})))
    manager.update_quota(ElasticQuotaSpec("b", "b", Resource({GPU: 5}), Resource({GPU: 10})))
    for i in range(8):
        manager.add_request(f"a{i}", "a", Resource({GPU: 1}), True)
        assert manager.check_admission("a", Resource({GPU: 1}), True) is None
        manager.allocate(f"a{i}", "a", Resource({GPU: 1}), True, 0, float(i))
    assert manager.runtime("a")[GPU] == 8
    for i in range(5):
        manager.add_request(f"b{i}", "b", Resource({GPU: 1}), True)
    assert manager.runtime("a")[GPU] == 5
    assert manager.recycle(0.0) == []
    victims = manager.recycle(10.0)
    assert sorted(v.key for v in victims) == ["a5", "a6", "a7"]
    manager.eviction_refused("a7", 10.0)
    assert "a7" not in {v.key for v in manager.recycle(11.0)}


def test_admission_refusal_names_quota_and_runtime() -> None:
    manager = _manager(10)
    manager.update_quota(ElasticQuotaSpec("a", "a", Resource({GPU: 2}), Resource({GPU: 4})))
    reason = manager.check_admission("a", Resource({GPU: 1}), True)
    assert reason is not None and "quota a would exceed its runtime" in reason


def test_invalid_quota_is_refused_with_every_problem_and_old_tree_kept() -> None:
    manager = _manager()
    manager.update_quota(ElasticQuotaSpec("a", "a", Resource({GPU: 2}), Resource({GPU: 4})))
    bad = ElasticQuotaSpec("a", "a", Resource({GPU: 9}), Resource({GPU: -1}), parent="nope")
    try:
        manager.update_quota(bad)
    except QuotaValidationError as err:
        assert len(err.problems) == 3
    else:
        raise AssertionError("invalid quota accepted")
    assert manager.status()["a"].max == Resource({GPU: 4})


def _tree_specs(draw_mins: list[int]) -> list[ElasticQuotaSpec]:
    specs = [ElasticQuotaSpec("p", min=Resource({GPU: 30}), max=Resource({GPU: 60}), is_parent=True)]
    for i, m in enumerate(draw_mins):
        parent = "p" if i % 2 else ""
        specs.append(ElasticQuotaSpec(f"l{i}", min=Resource({GPU: m}), max=Resource({GPU: 50}), parent=parent))
    return specs


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 10), min_size=2, max_size=6),
    st.lists(st.tuples(st.integers(0, 5), st.integers(1, 20), st.booleans()), max_size=20),
)
def test_incremental_recompute_equals_full_and_siblings_fit_the_pool(
    mins: list[int], changes: list[tuple[int, int, bool]]
) -> None:
    tree = QuotaTree()
    tree.rebuild(_tree_specs(mins))
    tree.set_pool({GPU: 70})
    leaves = [f"l{i}" for i in range(len(mins))]
    held: dict[str, int] = dict.fromkeys(leaves, 0)
    for index, amount, add in changes:
        leaf = leaves[index % len(leaves)]
        if not add and held[leaf] >= amount:
            tree.add_pod_request(leaf, Resource({GPU: amount}), -1)
            held[leaf] -= amount
        elif add:
            tree.add_pod_request(leaf, Resource({GPU: amount}), 1)
            held[leaf] += amount
    incremental = tree.runtimes()
    tree.recompute_all()
    assert tree.runtimes() == incremental
    top = [n for n in tree.nodes["root"].children]
    assert sum(tree.nodes[n].runtime.get(GPU, 0) for n in top) <= 70


def test_seed_002_example_gives_runtimes_5_20_35_40() -> None:
    shares = distribute(
        100,
        {"A": 10, "B": 15, "C": 20, "D": 15},
        {"A": 5, "B": 20, "C": 40, "D": 70},
        {"A": 40, "B": 60, "C": 50, "D": 80},
        True,
    )
    assert shares == {"A": 5, "B": 20, "C": 35, "D": 40}


def test_81_gpus_among_a_donor_and_ten_borrowers_lose_no_unit() -> None:
    borrowers = [f"b{i}" for i in range(10)]
    mins = {"donor": 3, **{b: (8 if i < 8 else 7) for i, b in enumerate(borrowers)}}
    requests = {"donor": 0, **dict.fromkeys(borrowers, 100)}
    shares = distribute(81, mins, requests, dict.fromkeys(mins, 1), True)
    assert shares["donor"] == 0
    assert [shares[b] for b in borrowers] == [9, 9, 9, 8, 8, 8, 8, 8, 7, 7]


def test_non_lending_quota_keeps_its_whole_min_while_idle() -> None:
    tree = QuotaTree()
    tree.rebuild(
        [
            ElasticQuotaSpec("keeper", min=Resource({GPU: 4}), max=Resource({GPU: 10}), allow_lent_resource=False),
            ElasticQuotaSpec("borrower", min=Resource({GPU: 0}), max=Resource({GPU: 10})),
        ]
    )
    tree.set_pool({GPU: 10})
    tree.add_pod_request("borrower", Resource({GPU: 10}), 1)
    assert tree.runtimes()["keeper"][GPU] == 4
    assert tree.runtimes()["borrower"][GPU] == 6


def test_child_max_above_parent_max_is_still_bounded_by_parent_runtime() -> None:
    tree = QuotaTree()
    tree.rebuild(
        [
            ElasticQuotaSpec("p", min=Resource({GPU: 2}), max=Resource({GPU: 4}), is_parent=True),
            ElasticQuotaSpec("c", min=Resource({GPU: 1}), max=Resource({GPU: 50}), parent="p"),
        ]
    )
    tree.set_pool({GPU: 100})
    tree.add_pod_request("c", Resource({GPU: 30}), 1)
    assert tree.runtimes()["c"][GPU] == 4


CPU, MEM = "cpu", "memory"


@st.composite
def quota_forests(draw: st.DrawFn) -> list[ElasticQuotaSpec]:
    """Two parents (one under the other) and leaves under each or under the root, with two keys,
    some zero weights, some quotas that do not lend their min, and keys some leaves do not limit."""
    specs = [
        ElasticQuotaSpec("p", min=Resource({CPU: 20, MEM: 20}), max=Resource({CPU: 60, MEM: 80}), is_parent=True),
        ElasticQuotaSpec("q", min=Resource({CPU: 5}), max=Resource({CPU: 30, MEM: 40}), parent="p", is_parent=True),
    ]
    for i in range(draw(st.integers(2, 7))):
        keys = draw(st.sampled_from([(CPU,), (MEM,), (CPU, MEM)]))
        specs.append(
            ElasticQuotaSpec(
                f"l{i}",
                min=Resource({k: draw(st.integers(0, 15)) for k in keys}),
                max=Resource({k: draw(st.integers(10, 50)) for k in keys}),
                parent=draw(st.sampled_from(["", "p", "q"])),
                allow_lent_resource=draw(st.booleans()),
                shared_weight=Resource({k: draw(st.integers(0, 3)) for k in keys}) if draw(st.booleans()) else None,
            )
        )
    return specs


@settings(max_examples=60, deadline=None)
@given(
    quota_forests(),
    st.lists(
        st.tuples(
            st.integers(0, 6), st.integers(1, 25), st.integers(0, 25), st.sampled_from(["add", "remove", "pool"])
        ),
        max_size=30,
    ),
    st.booleans(),
)
def test_a_pods_request_recomputed_on_its_path_equals_the_full_recompute(
    specs: list[ElasticQuotaSpec], changes: list[tuple[int, int, int, str]], min_scaling: bool
) -> None:
    """The incremental path (requests up by difference, one child re-shared where every member
    already had its request) gives exactly what a full recompute gives, whatever the pool, after
    every change of a sequence (the incremental tree is never recomputed in full)."""
    tree, oracle = QuotaTree(min_scaling=min_scaling), QuotaTree(min_scaling=min_scaling)
    for each in (tree, oracle):
        each.rebuild(specs)
        each.set_pool({CPU: 40, MEM: 60})
    leaves = [spec.name for spec in specs if not spec.is_parent]
    held: list[tuple[str, Resource]] = []
    for index, cpu, mem, action in changes:
        for each in (tree, oracle):
            if action == "pool":
                each.set_pool({CPU: cpu * 4, MEM: mem * 4})
            elif action == "remove" and held:
                leaf, resource = held[index % len(held)]
                each.add_pod_request(leaf, resource, -1)
            elif action != "remove":
                each.add_pod_request(leaves[index % len(leaves)], Resource({CPU: cpu, MEM: mem}), 1)
        if action == "remove" and held:
            held.pop(index % len(held))
        elif action == "add":
            held.append((leaves[index % len(leaves)], Resource({CPU: cpu, MEM: mem})))
        oracle.recompute_all()
        assert {n: node.request for n, node in tree.nodes.items()} == requests_by_definition(oracle)
        assert tree.runtimes() == oracle.runtimes()


def requests_by_definition(tree: QuotaTree) -> dict[str, dict[str, int]]:
    """Every quota's request from its definition: a leaf's pods, a parent's children summed
    (each capped at its max), at least the min of a quota that does not lend it."""
    found: dict[str, dict[str, int]] = {}

    def request(name: str) -> dict[str, int]:
        node = tree.nodes[name]
        total: dict[str, int] = {} if node.children else dict(node.pods)
        for child in node.children:
            for key, value in request(child).items():
                cap = tree.nodes[child].spec.max.to_dict().get(key)
                total[key] = total.get(key, 0) + (value if cap is None else min(value, cap))
        if not node.spec.allow_lent_resource:
            for key, value in node.spec.min.items():
                total[key] = max(total.get(key, 0), value)
        found[name] = total
        return total

    request("root")
    return found


def test_a_request_in_a_key_the_child_does_not_limit_still_reshares_a_short_parent() -> None:
    """Found by the property above: l1 limits memory only, yet its cpu request moves p's request,
    so p's pool moves too, and p's cpu was short (a zero-weight, non-lending member): p's cpu
    must be shared again, not only l1's keys."""
    specs = [
        ElasticQuotaSpec("p", min=Resource({CPU: 20, MEM: 20}), max=Resource({CPU: 60, MEM: 80}), is_parent=True),
        ElasticQuotaSpec("q", min=Resource({CPU: 5}), max=Resource({CPU: 30, MEM: 40}), parent="p", is_parent=True),
        ElasticQuotaSpec(
            "l0",
            min=Resource({CPU: 1}),
            max=Resource({CPU: 10}),
            parent="p",
            allow_lent_resource=False,
            shared_weight=Resource({CPU: 0}),
        ),
        ElasticQuotaSpec("l1", min=Resource({MEM: 0}), max=Resource({MEM: 10}), parent="p", allow_lent_resource=False),
        ElasticQuotaSpec("l2", min=Resource({CPU: 0}), max=Resource({CPU: 10}), allow_lent_resource=False),
    ]
    tree, oracle = QuotaTree(), QuotaTree()
    for each in (tree, oracle):
        each.rebuild(specs)
        each.set_pool({CPU: 40, MEM: 60})
        for sign in [1] * 12 + [-1] * 7:
            each.add_pod_request("l0", Resource({CPU: 1, MEM: 0}), sign)
        each.add_pod_request("l1", Resource({CPU: 1, MEM: 0}), 1)
    oracle.recompute_all()
    assert tree.runtimes() == oracle.runtimes()


def test_a_sibling_is_refused_while_a_child_above_its_lowered_max_keeps_the_parent_past_its_runtime() -> None:
    # Found by `herder bench --fuzz` (seeds 70152, 71205). The parent's runtime counts each
    # child's request only up to its max, so after team-a's max fell under what it runs the
    # parent used more than its runtime; team-b, within its own runtime, must wait (as
    # Koordinator's EnableCheckParentQuota checks every ancestor's runtime).
    manager = _manager(20)
    manager.update_quota(ElasticQuotaSpec("org", "", Resource({GPU: 14}), Resource({GPU: 14}), is_parent=True))
    manager.update_quota(ElasticQuotaSpec("team-a", "a", Resource(), Resource({GPU: 4}), parent="org"))
    manager.update_quota(ElasticQuotaSpec("team-b", "b", Resource(), Resource({GPU: 4}), parent="org"))
    for i in range(4):
        manager.add_request(f"a{i}", "team-a", Resource({GPU: 1}), True)
        manager.allocate(f"a{i}", "team-a", Resource({GPU: 1}), True, 0, 0.0)
    manager.update_quota(ElasticQuotaSpec("team-a", "a", Resource(), Resource({GPU: 3}), parent="org"))
    for i in range(4):
        manager.add_request(f"b{i}", "team-b", Resource({GPU: 1}), True)
    for i in range(3):
        assert manager.check_admission("team-b", Resource({GPU: 1}), True) is None
        manager.allocate(f"b{i}", "team-b", Resource({GPU: 1}), True, 0, 1.0)
    assert manager.runtime("org")[GPU] == 7  # team-a's 3 (its max) and team-b's 4
    reason = manager.check_admission("team-b", Resource({GPU: 1}), True)  # org: 4 + 3 used + 1 > 7
    assert reason is not None and "parent quota org would exceed its runtime" in reason
    assert manager.runtime("team-b")[GPU] == 4  # its own runtime had room
