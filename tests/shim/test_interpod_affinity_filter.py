"""Required inter-pod affinity and anti-affinity, row by row as kube-scheduler's InterPodAffinity
filter tables judge them: which nodes may take the incoming pod, given the pods running there
(whichever scheduler placed them)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.shim.pod_rules_world import REGION, ZONE, Cluster, affinity, expr, selector, term

SECURITY = {"service": "securityscan"}


def one_node(**existing: Any) -> Cluster:
    cluster = Cluster()
    cluster.node("node1", region="r1", zone="z11")
    if existing is not None:
        cluster.running("existing", "node1", **existing)
    return cluster


# kube-scheduler's single-node rows: an existing pod (labels service=securityscan) on node1.
SINGLE_NODE_ROWS: list[tuple[str, dict[str, Any], bool]] = [
    ("no rules, empty cluster", {}, True),
    (
        "affinity In matches the existing pod",
        {"affinity": affinity(term(REGION, expr("service", "In", "securityscan", "value2")))},
        True,
    ),
    (
        "affinity NotIn matches the existing pod",
        {"affinity": affinity(term(REGION, expr("service", "NotIn", "securityscan3", "value3")))},
        True,
    ),
    (
        "affinity in another namespace does not see the existing pod",
        {"affinity": affinity(term(REGION, expr("service", "In", "securityscan"), namespaces=["DiffNameSpace"]))},
        False,
    ),
    (
        "affinity selector matches no existing pod",
        {"affinity": affinity(term(REGION, expr("service", "In", "antivirusscan", "value2")))},
        False,
    ),
    (
        "affinity with several expressions, all matching",
        {
            "affinity": affinity(
                term(REGION, expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                term(REGION, expr("service", "In", "securityscan"), expr("service", "NotIn", "WrongValue")),
            )
        },
        True,
    ),
    (
        "affinity with several terms, one not matching",
        {
            "affinity": affinity(
                term(REGION, expr("service", "Exists"), expr("wrongkey", "DoesNotExist")),
                term(REGION, expr("service", "In", "securityscan2"), expr("service", "NotIn", "WrongValue")),
            )
        },
        False,
    ),
    (
        "affinity satisfied, anti-affinity not matching anything",
        {
            "affinity": affinity(
                term(REGION, expr("service", "In", "securityscan", "value2")),
                anti=(term(ZONE, expr("service", "In", "antivirusscan", "value2")),),
            )
        },
        True,
    ),
    (
        "affinity satisfied, anti-affinity matching the existing pod",
        {
            "affinity": affinity(
                term(REGION, expr("service", "In", "securityscan", "value2")),
                anti=(term(ZONE, expr("service", "In", "securityscan", "value2")),),
            )
        },
        False,
    ),
    (
        "anti-affinity on a key the node lacks refuses nothing",
        {"affinity": affinity(anti=(term("rack", expr("service", "Exists")),))},
        True,
    ),
    (
        "affinity on a key the node lacks refuses the node",
        {"affinity": affinity(term("rack", expr("service", "Exists")))},
        False,
    ),
]


@pytest.mark.parametrize(
    ("spec", "fits"), [(row[1], row[2]) for row in SINGLE_NODE_ROWS], ids=[r[0] for r in SINGLE_NODE_ROWS]
)
def test_single_node_rows(spec: dict[str, Any], fits: bool) -> None:
    cluster = one_node(labels=SECURITY)
    assert cluster.fits(labels={"service": "incoming"}, **spec) == ({"node1"} if fits else set())


@pytest.mark.parametrize(
    ("existing_anti", "fits"),
    [
        (term(ZONE, expr("security", "In", "S2")), False),  # matches the incoming pod's labels
        (term(ZONE, expr("security", "NotIn", "S2")), True),
        (term("rack", expr("security", "In", "S2")), True),  # the node has no rack label
    ],
)
def test_existing_pods_anti_affinity_keeps_a_pod_without_rules_away(existing_anti: dict[str, Any], fits: bool) -> None:
    cluster = one_node(labels={"security": "S1"}, affinity=affinity(anti=(existing_anti,)))
    assert cluster.fits(labels={"security": "S2"}) == ({"node1"} if fits else set())


def test_symmetry_is_checked_even_when_the_incoming_pods_own_rules_pass() -> None:
    cluster = one_node(labels={"security": "S1"}, affinity=affinity(anti=(term(ZONE, expr("security", "In", "S2")),)))
    incoming = affinity(term(REGION, expr("security", "In", "S1")), anti=(term(ZONE, expr("security", "In", "S3")),))
    verdicts = cluster.verdicts(labels={"security": "S2"}, affinity=incoming)
    assert verdicts == {"node1": "anti-affinity of pods running on zone"}


def test_the_first_pod_of_a_self_affine_group_may_go_where_the_key_exists() -> None:
    cluster = Cluster()
    cluster.node("a", region="r1")
    cluster.node("b", region="r2")
    cluster.node("keyless")
    rule = affinity(term(REGION, expr("app", "In", "db")))
    assert cluster.fits(labels={"app": "db"}, affinity=rule) == {"a", "b"}
    # A pod that does not match its own term has no such exception.
    assert cluster.fits(labels={"app": "web"}, affinity=rule) == set()


def test_a_matching_pod_elsewhere_ends_the_first_pod_exception() -> None:
    cluster = Cluster()
    cluster.node("a", region="r1")
    cluster.node("b", region="r2")
    cluster.running("db-0", "b", labels={"app": "db"})
    rule = affinity(term(REGION, expr("app", "In", "db")))
    assert cluster.fits(labels={"app": "db"}, affinity=rule) == {"b"}


def test_affinity_takes_every_node_of_the_matching_domain() -> None:
    cluster = Cluster().nodes(machine1={REGION: "China"}, machine2={REGION: "China"}, machine3={REGION: "India"})
    cluster.running("p", "machine1", labels={"foo": "bar"})
    assert cluster.fits(affinity=affinity(term(REGION, expr("foo", "In", "bar")))) == {"machine1", "machine2"}


def test_anti_affinity_refuses_every_node_of_the_matching_domain() -> None:
    cluster = Cluster().nodes(nodeA={ZONE: "az1"}, nodeB={ZONE: "az1"}, nodeC={ZONE: "az2"})
    cluster.running("p", "nodeA", labels={"foo": "abc"})
    rule = affinity(anti=(term(ZONE, expr("foo", "In", "abc")),))
    refused = dict.fromkeys(("nodeA", "nodeB"), "pod anti-affinity on zone")
    assert cluster.verdicts(affinity=rule) == {**refused, "nodeC": None}


def test_all_terms_must_be_matched_by_the_same_pod() -> None:
    cluster = Cluster()
    cluster.node("a", region="r1", zone="z1")
    cluster.running("x", "a", labels={"foo": "1"})
    cluster.running("y", "a", labels={"bar": "1"})
    both = affinity(term(REGION, expr("foo", "Exists")), term(ZONE, expr("bar", "Exists")))
    assert cluster.fits(affinity=both) == set()
    cluster.running("z", "a", labels={"foo": "1", "bar": "1"})
    assert cluster.fits(affinity=both) == {"a"}


def test_namespace_selector_and_namespaces() -> None:
    cluster = Cluster(team={"tier": "gold"}, other={"tier": "bronze"})
    cluster.node("a", region="r1")
    cluster.node("b", region="r2")
    cluster.running("gold", "a", labels={"app": "db"}, ns="team")
    cluster.running("bronze", "b", labels={"app": "db"}, ns="other")
    by_selector = term(REGION, expr("app", "In", "db"), namespaceSelector=selector(tier="gold"))
    assert cluster.fits(affinity=affinity(by_selector)) == {"a"}
    every_namespace = term(REGION, expr("app", "In", "db"), namespaceSelector={})
    assert cluster.fits(affinity=affinity(every_namespace)) == {"a", "b"}
    listed = term(REGION, expr("app", "In", "db"), namespaces=["other"])
    assert cluster.fits(affinity=affinity(listed)) == {"b"}
    own_namespace_only = term(REGION, expr("app", "In", "db"))
    assert cluster.fits(affinity=affinity(own_namespace_only)) == set()  # incoming is in "default"


def test_existing_anti_affinity_with_a_namespace_selector_reads_the_incoming_pods_namespace() -> None:
    cluster = Cluster(team={"tier": "gold"}, other={})
    cluster.node("a", zone="z1")
    rule = term(ZONE, expr("app", "Exists"), namespaceSelector=selector(tier="gold"))
    cluster.running("guard", "a", ns="other", affinity=affinity(anti=(rule,)))
    assert cluster.fits(labels={"app": "x"}, ns="team") == set()
    assert cluster.fits(labels={"app": "x"}, ns="other") == {"a"}


def test_a_namespace_selector_sees_a_namespaces_labels_as_they_are_now() -> None:
    cluster = Cluster(team={"tier": "bronze"})
    cluster.node("a", region="r1")
    cluster.node("b", region="r2")
    cluster.running("db", "a", labels={"app": "db"}, ns="team")
    near_gold_db = affinity(term(REGION, expr("app", "In", "db"), namespaceSelector=selector(tier="gold")))
    away_from_gold_db = affinity(anti=(term(REGION, expr("app", "In", "db"), namespaceSelector=selector(tier="gold")),))
    assert cluster.fits(affinity=near_gold_db) == set()
    assert cluster.fits(affinity=away_from_gold_db) == {"a", "b"}
    cluster.world.sched.set_namespace_labels("team", {"tier": "gold"})  # the db's namespace is relabelled
    assert cluster.fits(affinity=near_gold_db) == {"a"}
    assert cluster.fits(affinity=away_from_gold_db) == {"b"}


def test_a_running_pods_anti_affinity_sees_the_incoming_namespaces_labels_as_they_are_now() -> None:
    cluster = Cluster(team={})
    cluster.node("a", zone="z1")
    rule = term(ZONE, expr("app", "Exists"), namespaceSelector=selector(tier="gold"))
    cluster.running("guard", "a", ns="default", affinity=affinity(anti=(rule,)))
    assert cluster.fits(labels={"app": "x"}, ns="team") == {"a"}
    cluster.world.sched.set_namespace_labels("team", {"tier": "gold"})
    assert cluster.fits(labels={"app": "x"}, ns="team") == set()


def test_match_label_keys_and_mismatch_label_keys_use_the_pods_own_values() -> None:
    cluster = Cluster()
    cluster.node("a", zone="z1")
    cluster.node("b", zone="z2")
    cluster.running("v1", "a", labels={"app": "web", "rev": "1"})
    cluster.running("v2", "b", labels={"app": "web", "rev": "2"})
    same_rev = term(ZONE, expr("app", "In", "web"), matchLabelKeys=["rev"])
    assert cluster.fits(labels={"app": "web", "rev": "2"}, affinity=affinity(same_rev)) == {"b"}
    other_tenants = term(ZONE, expr("app", "In", "web"), mismatchLabelKeys=["rev"])
    assert cluster.fits(labels={"app": "web", "rev": "2"}, affinity=affinity(anti=(other_tenants,))) == {"b"}


def test_a_malformed_term_keeps_the_pod_pending_naming_the_term() -> None:
    cluster = Cluster()
    cluster.node("a", zone="z1")
    cluster.submit("p", affinity=affinity(term(ZONE, expr("app", "In"))))
    assert cluster.schedule() == {}
    reason = cluster.reason("p")
    assert reason is not None
    assert "podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0]" in reason
    assert "operator In needs values" in reason


def test_pods_placed_in_one_cycle_see_each_other() -> None:
    cluster = Cluster()
    for name in ("n1", "n2", "n3"):
        cluster.node(name)
    rule = affinity(anti=(term("kubernetes.io/hostname", expr("app", "In", "web")),))
    for i in range(4):
        cluster.submit(f"web-{i}", labels={"app": "web"}, affinity=rule)
    placed = cluster.schedule()
    assert len(placed) == 3 and len(set(placed.values())) == 3
    waiting = next(f"web-{i}" for i in range(4) if f"web-{i}" not in placed)
    assert cluster.reason(waiting) == "no node fits: 3 pod anti-affinity on kubernetes.io/hostname"


def test_a_pod_affine_to_a_pod_placed_later_in_the_cycle_follows_it() -> None:
    cluster = Cluster()
    cluster.node("a", zone="z1")
    cluster.node("b", zone="z2")
    cluster.submit("cache", labels={"app": "cache"}, affinity=affinity(term(ZONE, expr("app", "In", "db"))))
    assert cluster.schedule() == {}
    cluster.submit("db", labels={"app": "db"}, nodeSelector={ZONE: "z2"})
    assert cluster.schedule() == {"db": "b", "cache": "b"}
