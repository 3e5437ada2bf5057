"""Runtime vectors derived by hand from DESIGN.md's algorithm (each test's comment is the derivation).

Runtime per key: bottom-up requests (a parent's is the sum of its children's capped at their max, a
non-lending quota asks at least its min); top-down each pool gives every child min(request, min),
then the rest by shared weight (default: max), capped at request, re-shared, largest remainder
with ties by name; a pool below the sum of mins scales them to floor(pool * min / sum).
"""

from __future__ import annotations

from collections.abc import Mapping

from core.config.settings import Settings
from core.elastic.manager import ElasticQuotaManager
from core.elastic.shares import QuotaTree
from core.elastic.spec import ElasticQuotaSpec
from core.resources import Resource

GPU = "nvidia.com/gpu"


def quota(
    name: str,
    min_: int,
    max_: int,
    *,
    parent: str = "",
    is_parent: bool = False,
    weight: int | None = None,
    lend: bool = True,
) -> ElasticQuotaSpec:
    return ElasticQuotaSpec(
        name,
        name,
        Resource({GPU: min_}),
        Resource({GPU: max_}),
        parent=parent,
        is_parent=is_parent,
        allow_lent_resource=lend,
        shared_weight=None if weight is None else Resource({GPU: weight}),
    )


def runtimes(
    specs: list[ElasticQuotaSpec], pool: int, requests: Mapping[str, int], min_scaling: bool = True
) -> dict[str, int]:
    tree = QuotaTree(min_scaling)
    tree.rebuild(specs)
    tree.set_pool({GPU: pool})
    for name, amount in requests.items():
        tree.add_pod_request(name, Resource({GPU: amount}), 1)
    return {name: runtime.get_value(GPU) for name, runtime in tree.runtimes().items()}


def test_flat_quotas_share_the_rest_by_weight_with_the_odd_unit_to_the_first_name() -> None:
    # pool 60. mins first: a min(30,10)=10, b min(5,20)=5, c min(40,10)=10 -> 25, 35 left.
    # Hungry a (room 20) and c (room 30), weights 40:40 -> 17.5 each, neither capped.
    # Floors 17+17, one unit left, equal remainders -> a by name: a 10+18, c 10+17, b 5.
    got = runtimes([quota("a", 10, 40), quota("b", 20, 40), quota("c", 10, 40)], 60, {"a": 30, "b": 5, "c": 40})
    assert got == {"a": 28, "b": 5, "c": 27}


def test_a_parents_runtime_is_shared_among_its_children() -> None:
    # Requests: x 50, y 30 -> p asks min(50,50)+min(30,50) = 80; q asks 80.
    # Root pool 100: p min 40, q min 20 -> 40 left; rooms p 40, q 60, weights 100:100 -> 20 each:
    # p 60, q 40. p's pool 60: x min 10, y min 20 -> 30 left; rooms x 40, y 10, weights 50:50 -> 15
    # each, y capped at 10 and its 5 go to x: x 10+20 = 30, y 20+10 = 30.
    specs = [
        quota("p", 40, 100, is_parent=True),
        quota("q", 20, 100),
        quota("x", 10, 50, parent="p"),
        quota("y", 20, 50, parent="p"),
    ]
    got = runtimes(specs, 100, {"x": 50, "y": 30, "q": 80})
    assert got == {"p": 60, "q": 40, "x": 30, "y": 30}


def test_a_zero_weight_quota_keeps_its_min_but_never_borrows_idle_capacity() -> None:
    # pool 100: z min(60,10)=10, w min(20,10)=10, 80 left. z has weight 0, so only w is hungry
    # (room 10): w 20, z 10 although 70 units stay idle.
    got = runtimes([quota("z", 10, 100, weight=0), quota("w", 10, 100)], 100, {"z": 60, "w": 20})
    assert got == {"z": 10, "w": 20}


def test_a_non_lending_leaf_keeps_its_whole_min_while_asking_less() -> None:
    # keeper asks max(5, min 30) = 30 and gets min(30,30) = 30; borrower min 0 gets the 70 left.
    got = runtimes(
        [quota("keeper", 30, 50, lend=False), quota("borrower", 0, 100)], 100, {"keeper": 5, "borrower": 100}
    )
    assert got == {"keeper": 30, "borrower": 70}


def test_a_non_lending_parent_keeps_its_whole_min_for_its_children() -> None:
    # p (non-lending, min 40) asks max(0, 40) = 40 with an idle child: p 40, b 60 of the 100.
    specs = [quota("p", 40, 100, is_parent=True, lend=False), quota("c", 10, 100, parent="p"), quota("b", 0, 100)]
    idle = runtimes(specs, 100, {"b": 100})
    assert idle == {"p": 40, "c": 0, "b": 60}
    # c asks 25: p asks max(25, 40) = 40 still -> p 40; inside p, c min 10 + room 15 = 25.
    busy = runtimes(specs, 100, {"b": 100, "c": 25})
    assert busy == {"p": 40, "c": 25, "b": 60}


def test_mins_scale_down_when_the_pool_shrinks_below_their_sum() -> None:
    # pool 45 < mins 50+30+20 = 100: scaled a floor(45*50/100)=22, b floor(45*30/100)=13,
    # c floor(45*20/100)=9 -> 44; the 1 left by weight 100:100:100 -> equal remainders, a by name.
    specs = [quota("a", 50, 100), quota("b", 30, 100), quota("c", 20, 100)]
    asks = {"a": 100, "b": 100, "c": 100}
    assert runtimes(specs, 45, asks) == {"a": 23, "b": 13, "c": 9}


def test_mins_are_restored_when_the_pool_grows_back() -> None:
    # Same tree, pool 45 then 200: mins 50/30/20 again, 100 left by equal weight = 33.3 each,
    # floors 33 each and the odd unit to a: a 84, b 63, c 53.
    tree = QuotaTree()
    tree.rebuild([quota("a", 50, 100), quota("b", 30, 100), quota("c", 20, 100)])
    for name in "abc":
        tree.add_pod_request(name, Resource({GPU: 100}), 1)
    tree.set_pool({GPU: 45})
    assert {n: r.get_value(GPU) for n, r in tree.runtimes().items()} == {"a": 23, "b": 13, "c": 9}
    tree.set_pool({GPU: 200})
    assert {n: r.get_value(GPU) for n, r in tree.runtimes().items()} == {"a": 84, "b": 63, "c": 53}


def test_without_min_scaling_each_quota_keeps_its_min_even_above_the_pool() -> None:
    # quota.minScaling=false: mins are not scaled, each gets min(request, min) = 50/30/20.
    specs = [quota("a", 50, 100), quota("b", 30, 100), quota("c", 20, 100)]
    got = runtimes(specs, 45, {"a": 100, "b": 100, "c": 100}, min_scaling=False)
    assert got == {"a": 50, "b": 30, "c": 20}


def test_the_min_scaling_setting_is_applied_by_the_manager() -> None:
    manager = ElasticQuotaManager(Settings(min_scaling=True))
    manager.set_cluster_total(Resource({GPU: 45}))
    for spec in [quota("a", 50, 100), quota("b", 30, 100), quota("c", 20, 100)]:
        manager.update_quota(spec)
        manager.add_request(f"{spec.name}-pod", spec.name, Resource({GPU: 100}), True)
    assert [manager.runtime(n).get_value(GPU) for n in "abc"] == [23, 13, 9]
    manager.update_settings(Settings(min_scaling=False))
    assert [manager.runtime(n).get_value(GPU) for n in "abc"] == [50, 30, 20]


def test_scarce_units_go_by_largest_remainder_before_name() -> None:
    # 5 GPUs, mins 0, weights 3:2:2: exact shares 2.14, 1.43, 1.43 -> floors 2,1,1 (4), one left:
    # b and c have the largest remainder (0.43 > a's 0.14), tie between them -> b by name.
    specs = [quota("a", 0, 10, weight=3), quota("b", 0, 10, weight=2), quota("c", 0, 10, weight=2)]
    got = runtimes(specs, 5, {"a": 10, "b": 10, "c": 10})
    assert got == {"a": 2, "b": 2, "c": 1}
    assert sum(got.values()) == 5


def test_a_child_max_above_its_parent_max_is_bounded_by_the_parent() -> None:
    # c (max 100) asks 100 -> p asks min(100, 100) = 100, capped at p's max 20 when the root shares;
    # s asks 80: 20 + 80 fit the pool of 100, so p 20, s 80. Inside p: c gets all of p's 20, never
    # its own max of 100.
    specs = [quota("p", 0, 20, is_parent=True), quota("c", 0, 100, parent="p"), quota("s", 0, 100)]
    got = runtimes(specs, 100, {"c": 100, "s": 80})
    assert got == {"p": 20, "c": 20, "s": 80}


def test_a_quota_limits_only_the_resources_named_in_its_max() -> None:
    manager = ElasticQuotaManager()
    manager.set_cluster_total(Resource({GPU: 4, "vcore": 8000, "memory": 1 << 30}))
    manager.update_quota(ElasticQuotaSpec("gpus", "gpus", Resource({GPU: 1}), Resource({GPU: 4})))
    big = Resource({GPU: 1, "vcore": 64000, "memory": 1 << 40, "pods": 1})
    manager.add_request("p", "gpus", big, True)
    assert manager.runtime("gpus") == Resource({GPU: 1})
    assert manager.check_admission("gpus", big, True) is None
    manager.allocate("p", "gpus", big, True, 0, 0.0)
    assert manager.status()["gpus"].used == Resource({GPU: 1})
    reason = manager.check_admission("gpus", Resource({"vcore": 1000, GPU: 1}), True)
    assert reason is not None and GPU in reason and "vcore" not in reason


def test_seed_002_example_through_the_tree_gives_5_20_35_40() -> None:
    # The seed's example as quotas (weights 40/60/50/80, total 100): mins 5+15+20+15 = 55, 45 left
    # by 60:50:80 -> B 14 > its room 5, capped; 40 left by 50:80 -> C 15.4, D 24.6 -> C 15, D 25.
    specs = [
        quota("A", 10, 100, weight=40),
        quota("B", 15, 100, weight=60),
        quota("C", 20, 100, weight=50),
        quota("D", 15, 100, weight=80),
    ]
    got = runtimes(specs, 100, {"A": 5, "B": 20, "C": 40, "D": 70})
    assert got == {"A": 5, "B": 20, "C": 35, "D": 40}
