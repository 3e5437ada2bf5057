"""Kubernetes objects to core inputs: pod size, identity keys, namespace tags, nodes, quotas."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.objects.ask import (
    FOREIGN_DEFAULT,
    FOREIGN_STATIC,
    TAG_GUARANTEED,
    TAG_MAX_APPS,
    TAG_NAMESPACE,
    TAG_PARENT_QUEUE,
    TAG_QUOTA,
    UserGroup,
)
from shim.convert.identity import application_id, is_herder_pod, queue_name, user_info
from shim.convert.namespaces import namespace_problems, namespace_tags
from shim.convert.nodes import node_to_info
from shim.convert.objects import ConversionError
from shim.convert.pod_size import pod_resource
from shim.convert.pods import pod_is_finished, pod_node, pod_to_allocation, pod_to_ask
from shim.convert.quotas import quota_to_spec
from shim.interning import Interner


def container(name: str, limits: dict[str, Any] | None = None, **requests: Any) -> dict[str, Any]:
    res: dict[str, Any] = {"requests": requests}
    if limits:
        res["limits"] = limits
    return {"name": name, "resources": res}


def sidecar(name: str, **requests: Any) -> dict[str, Any]:
    return {**container(name, **requests), "restartPolicy": "Always"}


def pod(
    name: str = "p",
    ns: str = "team",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    spec.setdefault("containers", [container("main", cpu="1", memory="1Gi")])
    return {
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"uid-{name}",
            "labels": labels or {},
            "annotations": annotations or {},
        },
        "spec": spec,
    }


def namespace(name: str = "team", **annotations: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "annotations": annotations}}


# --- pod size -------------------------------------------------------------------------------


def test_containers_requests_are_summed_with_one_pod_slot() -> None:
    p = pod(containers=[container("a", cpu="250m", memory="1Gi"), container("b", cpu="1", memory="512Mi")])
    assert pod_resource(p) == {"vcore": 1250, "memory": 1024**3 + 512 * 1024**2, "pods": 1}


def test_sidecars_before_and_after_init_containers() -> None:
    """Worked by hand (cpu in millicores):

    init containers in order: init1 1000 (plain), s1 200 (sidecar), init2 900 (plain), s2 100 (sidecar);
    main container 500.
    init1 runs alone: 1000. init2 runs beside s1 (started before it): 900 + 200 = 1100.
    s2 starts after init2 so never overlaps it. Steady state: 500 + s1 200 + s2 100 = 800.
    Pod size is the larger: 1100.
    """
    p = pod(
        containers=[container("main", cpu="500m")],
        initContainers=[
            container("init1", cpu="1"),
            sidecar("s1", cpu="200m"),
            container("init2", cpu="900m"),
            sidecar("s2", cpu="100m"),
        ],
    )
    assert pod_resource(p)["vcore"] == 1100


def test_sidecars_add_to_steady_state_when_larger_than_init_peak() -> None:
    p = pod(
        containers=[container("main", cpu="2")],
        initContainers=[container("init", cpu="1"), sidecar("proxy", cpu="500m", memory="100Mi")],
    )
    assert pod_resource(p) == {"vcore": 2500, "memory": 100 * 1024**2, "pods": 1}


def test_pod_level_requests_override_only_what_they_name_and_overhead_adds() -> None:
    p = pod(
        containers=[container("a", cpu="1", memory="1Gi")],
        resources={"requests": {"cpu": "3"}},
        overhead={"cpu": "100m", "memory": "10Mi"},
    )
    assert pod_resource(p) == {"vcore": 3100, "memory": 1024**3 + 10 * 1024**2, "pods": 1}


def test_limits_are_ignored() -> None:
    p = pod(containers=[container("a", limits={"cpu": "8", "memory": "8Gi"}, cpu="1")])
    assert pod_resource(p) == {"vcore": 1000, "pods": 1}


def test_extended_resources_and_hugepages_keep_their_names() -> None:
    p = pod(containers=[container("a", **{"nvidia.com/gpu": "2", "hugepages-2Mi": "4Mi"})])
    assert pod_resource(p) == {"nvidia.com/gpu": 2, "hugepages-2Mi": 4 * 1024**2, "pods": 1}


def test_malformed_quantity_names_pod_container_and_resource() -> None:
    p = pod(containers=[container("trainer", memory="lots")])
    with pytest.raises(ConversionError, match=r"team/p.*trainer.*memory"):
        pod_resource(p)


@given(st.lists(st.integers(0, 4000), min_size=1, max_size=4), st.lists(st.integers(0, 4000), max_size=4))
def test_pod_size_is_at_least_every_container_and_the_main_sum(mains: list[int], inits: list[int]) -> None:
    p = pod(
        containers=[container(f"c{i}", cpu=f"{v}m") for i, v in enumerate(mains)],
        initContainers=[container(f"i{i}", cpu=f"{v}m") for i, v in enumerate(inits)],
    )
    size = pod_resource(p)["vcore"]
    assert size == max([sum(mains), *inits])


# --- identity -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "annotations", "expected"),
    [
        (
            {"yunikorn.apache.org/app-id": "L", "applicationId": "A", "spark-app-selector": "S"},
            {"yunikorn.apache.org/app-id": "N"},
            "L",
        ),
        ({"applicationId": "A", "spark-app-selector": "S"}, {"yunikorn.apache.org/app-id": "N"}, "N"),
        ({"applicationId": "A", "spark-app-selector": "S"}, {}, "A"),
        ({"spark-app-selector": "S"}, {}, "S"),
    ],
)
def test_application_id_key_precedence(labels: dict[str, str], annotations: dict[str, str], expected: str) -> None:
    assert application_id(pod(labels=labels, annotations=annotations)) == expected


def test_application_id_falls_back_to_controller_then_namespace() -> None:
    p = pod()
    p["metadata"]["ownerReferences"] = [
        {"kind": "ReplicaSet", "name": "other", "controller": False},
        {"kind": "Job", "name": "Train-42", "controller": True},
    ]
    assert application_id(p) == "job-train-42"
    assert application_id(pod(ns="ml")) == "ml-autogen"


def test_queue_key_precedence() -> None:
    yk = "yunikorn.apache.org/queue"
    assert queue_name(pod(labels={yk: "a", "queue": "c"}, annotations={yk: "b"})) == "a"
    assert queue_name(pod(labels={"queue": "c"}, annotations={yk: "b"})) == "b"
    assert queue_name(pod(labels={"queue": "c"})) == "c"
    assert queue_name(pod()) is None


def test_user_info_from_annotation_with_default_nobody() -> None:
    info = json.dumps({"user": "alice", "groups": ["dev", "ml"]})
    assert user_info(pod(annotations={"yunikorn.apache.org/user.info": info})) == UserGroup("alice", ("dev", "ml"))
    assert user_info(pod()) == UserGroup("nobody", ())


def test_malformed_user_info_raises_and_keeps_the_ask_pending_with_a_problem() -> None:
    p = pod(annotations={"yunikorn.apache.org/user.info": "{alice"})
    with pytest.raises(ConversionError, match=r"team/p.*user.info"):
        user_info(p)
    ask = pod_to_ask(p, namespace())
    assert ask.user == UserGroup() and any("user.info" in text for text in ask.problems)


def test_scheduler_name_decides_herder_pods() -> None:
    assert is_herder_pod(pod(schedulerName="herder"), "herder")
    assert not is_herder_pod(pod(), "herder")


# --- namespaces -----------------------------------------------------------------------------


def test_namespace_quota_json_wins_over_max_cpu_and_memory() -> None:
    ns = namespace(
        **{
            "yunikorn.apache.org/namespace.quota": '{"cpu": "64", "memory": "100Gi"}',
            "yunikorn.apache.org/namespace.max.cpu": "1",
            "yunikorn.apache.org/parentqueue": "root.ml",
            "yunikorn.apache.org/namespace.guaranteed": '{"cpu": "2"}',
            "yunikorn.apache.org/namespace.maxApps": "5",
        }
    )
    tags = namespace_tags(ns)
    assert json.loads(tags[TAG_QUOTA]) == {"memory": 107374182400, "vcore": 64000}
    assert tags[TAG_QUOTA] == '{"memory": 107374182400, "vcore": 64000}'
    assert tags[TAG_NAMESPACE] == "team" and tags[TAG_PARENT_QUEUE] == "root.ml"
    assert json.loads(tags[TAG_GUARANTEED]) == {"vcore": 2000} and tags[TAG_MAX_APPS] == "5"
    assert namespace_problems(ns) == []


def test_older_max_cpu_and_memory_annotations_make_the_quota() -> None:
    ns = namespace(**{"yunikorn.apache.org/namespace.max.cpu": "4", "yunikorn.apache.org/namespace.max.memory": "1Gi"})
    assert json.loads(namespace_tags(ns)[TAG_QUOTA]) == {"vcore": 4000, "memory": 1024**3}


def test_malformed_namespace_annotations_are_reported_and_left_out() -> None:
    ns = namespace(
        **{
            "yunikorn.apache.org/namespace.quota": '{"cpu": "many"}',
            "yunikorn.apache.org/namespace.maxApps": "-1",
        }
    )
    assert TAG_QUOTA not in namespace_tags(ns) and TAG_MAX_APPS not in namespace_tags(ns)
    problems = namespace_problems(ns)
    assert len(problems) == 2
    assert any("team" in p and "namespace.quota" in p and "many" in p for p in problems)
    assert any("namespace.maxApps" in p and "-1" in p for p in problems)
    assert set(pod_to_ask(pod(), ns).problems) == set(problems)


# --- asks -----------------------------------------------------------------------------------


def test_pod_to_ask_carries_every_field() -> None:
    p = pod(
        labels={
            "quota.scheduling.koordinator.sh/name": "q1",
            "quota.scheduling.koordinator.sh/preemptible": "false",
        },
        priority=7,
        nodeSelector={"zone": "a"},
        tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}],
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {}}],
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "kubernetes.io/hostname"}]
            },
        },
        topologySpreadConstraints=[
            {"topologyKey": "topology.kubernetes.io/zone"},
            {"topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"},
        ],
    )
    p["metadata"]["creationTimestamp"] = "2026-01-01T00:00:10Z"
    ask = pod_to_ask(p, namespace())
    assert ask.key == "uid-p" and ask.name == "team/p" and ask.namespace == "team"
    assert ask.quota == "q1" and ask.preemptible is False and ask.priority == 7
    assert ask.created == 1767225610.0
    c = ask.constraints
    assert c.node_selector == (("zone", "a"),)
    assert c.required_terms[0].matches({"disk": "ssd"}, "n1")
    assert not c.required_terms[0].matches({"disk": "ssd"}, "n2")
    assert c.tolerations[0].key == "gpu"
    assert c.unsupported_required == ()
    rules = ask.pod
    assert [t.topology_key for t in rules.anti_affinity] == ["kubernetes.io/hostname"]
    assert [(s.topology_key, s.hard) for s in rules.spread] == [
        ("topology.kubernetes.io/zone", True),
        ("kubernetes.io/hostname", False),
    ]
    assert c.unsupported_preferred == ()
    assert [weight for weight, _ in rules.preferred_nodes] == [1]
    assert ask.problems == ()


def test_ask_without_uid_is_keyed_by_namespace_and_name() -> None:
    p = pod()
    del p["metadata"]["uid"]
    ask = pod_to_ask(p, None)
    assert ask.key == "team/p" and ask.preemptible and ask.created == 0.0 and ask.tags == {}


def test_malformed_request_keeps_the_pod_with_one_pod_slot_and_a_reason() -> None:
    ask = pod_to_ask(pod(containers=[container("main", cpu="x")]), namespace())
    assert ask.resource == {"pods": 1}
    assert any("main" in text and "cpu" in text for text in ask.problems)


# --- allocations ----------------------------------------------------------------------------


def test_foreign_pods_owned_by_a_node_are_static_others_default() -> None:
    mirror = pod(nodeName="n1")
    mirror["metadata"]["ownerReferences"] = [{"kind": "Node", "name": "n1"}]
    mirror["metadata"]["creationTimestamp"] = 5
    mirror["status"] = {"startTime": 9}
    alloc = pod_to_allocation(mirror, namespace())
    assert alloc.foreign == FOREIGN_STATIC and alloc.node_id == "n1"
    assert alloc.request_time == 5.0 and alloc.allocation_time == 9.0
    assert alloc.resource == {"vcore": 1000, "memory": 1024**3, "pods": 1}
    assert pod_to_allocation(pod(nodeName="n2"), None).foreign == FOREIGN_DEFAULT


def test_herder_pod_on_a_node_becomes_its_own_allocation() -> None:
    alloc = pod_to_allocation(pod(nodeName="n1", schedulerName="herder"), namespace())
    assert alloc.foreign is None and alloc.ask is not None and alloc.ask.key == alloc.key == "uid-p"


def test_finished_and_node_helpers() -> None:
    assert pod_is_finished({**pod(), "status": {"phase": "Failed"}})
    assert not pod_is_finished({**pod(), "status": {"phase": "Running"}})
    assert pod_node(pod(nodeName="n3")) == "n3" and pod_node(pod()) is None


# --- nodes ----------------------------------------------------------------------------------


def test_node_with_taints_cordon_and_not_ready() -> None:
    node = {
        "metadata": {"name": "n1", "labels": {"zone": "a"}},
        "spec": {"unschedulable": True, "taints": [{"key": "gpu", "value": "yes", "effect": "NoExecute"}]},
        "status": {
            "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "False"}],
        },
    }
    info = node_to_info(node)
    assert info.capacity == {"vcore": 8000, "memory": 16 * 1024**3, "pods": 110}
    assert info.labels == {"zone": "a"} and not info.schedulable and not info.ready
    assert (info.taints[0].key, info.taints[0].value, info.taints[0].effect) == ("gpu", "yes", "NoExecute")


def test_node_without_conditions_is_ready_and_schedulable() -> None:
    info = node_to_info({"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1"}}})
    assert info.ready and info.schedulable


def test_malformed_allocatable_names_the_node() -> None:
    with pytest.raises(ConversionError, match=r"node n9.*memory"):
        node_to_info({"metadata": {"name": "n9"}, "status": {"allocatable": {"memory": "??"}}})


# --- quotas ---------------------------------------------------------------------------------


def quota(labels: dict[str, str], annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {"name": "q", "namespace": "team", "labels": labels, "annotations": annotations},
        "spec": {"min": {"cpu": "1"}, "max": {"cpu": "4", "memory": "8Gi"}},
    }


def test_quota_with_every_koordinator_key() -> None:
    k = "quota.scheduling.koordinator.sh/"
    spec = quota_to_spec(
        quota(
            {k + "parent": "org", k + "is-parent": "true", k + "allow-lent-resource": "false"},
            {k + "shared-weight": '{"cpu": "2"}'},
        )
    )
    assert (spec.name, spec.namespace, spec.parent, spec.is_parent) == ("q", "team", "org", True)
    assert spec.allow_lent_resource is False and spec.shared_weight == {"vcore": 2000}
    assert spec.min == {"vcore": 1000} and spec.max == {"vcore": 4000, "memory": 8 * 1024**3}


def test_quota_defaults_root_parent_leaf_lending_and_max_weight() -> None:
    spec = quota_to_spec(quota({"quota.scheduling.koordinator.sh/allow-lent-resource": "no"}, {}))
    assert spec.parent == "" and not spec.is_parent and spec.allow_lent_resource and spec.shared_weight is None


def test_malformed_quota_names_quota_and_key() -> None:
    with pytest.raises(ConversionError, match=r"team/q.*shared-weight"):
        quota_to_spec(quota({}, {"quota.scheduling.koordinator.sh/shared-weight": "nope"}))
    bad = quota({}, {})
    bad["spec"]["max"] = {"cpu": "x"}
    with pytest.raises(ConversionError, match=r"team/q.*spec.max.*cpu"):
        quota_to_spec(bad)


# --- numbers that cannot be real ------------------------------------------------------------


@pytest.mark.parametrize("cpu", ["-4", -4, "-500m", "NaN", "Inf", float("nan"), float("inf"), "1e40", "9Ei"])
def test_negative_non_finite_and_absurd_requests_keep_the_pod_pending_with_a_reason(cpu: Any) -> None:
    ask = pod_to_ask(pod(containers=[container("main", cpu=cpu, memory="1Gi")]), namespace())
    assert ask.problems, f"cpu {cpu!r} was accepted as {ask.resource}"
    assert any("'main'" in text and "'cpu'" in text for text in ask.problems)


@pytest.mark.parametrize("allocatable", [{"cpu": "-4", "memory": "8Gi"}, {"cpu": "4", "memory": "-1Gi"}])
def test_a_node_with_negative_allocatable_is_refused_naming_it(allocatable: dict[str, str]) -> None:
    node = {"metadata": {"name": "n1"}, "status": {"allocatable": allocatable}}
    with pytest.raises(ConversionError, match=r"node n1 status\.allocatable.*negative quantity"):
        node_to_info(node)


@pytest.mark.parametrize("spec", ["unlimited", ["cpu"], None, 5, {"max": "4"}, {"min": ["cpu"], "max": {"cpu": "4"}}])
def test_an_elastic_quota_whose_spec_is_not_a_mapping_is_refused_not_unlimited(spec: Any) -> None:
    quota = {"metadata": {"name": "q", "namespace": "team"}, "spec": spec}
    with pytest.raises(ConversionError, match=r"ElasticQuota team/q spec"):
        quota_to_spec(quota)


def test_an_elastic_quota_with_a_negative_max_is_refused() -> None:
    quota = {"metadata": {"name": "q", "namespace": "team"}, "spec": {"max": {"cpu": "-1"}}}
    with pytest.raises(ConversionError, match="negative quantity"):
        quota_to_spec(quota)


def test_allow_preemption_annotation_opts_a_pod_out_of_cross_queue_preemption() -> None:
    assert pod_to_ask(pod(), None).allow_preemption
    assert not pod_to_ask(pod(annotations={"yunikorn.apache.org/allow-preemption": "False"}), None).allow_preemption
    assert pod_to_ask(pod(annotations={"yunikorn.apache.org/allow-preemption": "true"}), None).allow_preemption


# --- bad objects never pass as good (issue 15, point 6) ---------------------------------------


@pytest.mark.parametrize(
    ("malformed", "named"),
    [
        ({"metadata": {"name": "p", "namespace": "team"}}, "spec: expected an object, got nothing"),
        ({**pod(), "spec": None}, "spec: expected an object, got null"),
        ({**pod(), "spec": ["containers"]}, "spec: expected an object, got a list"),
        (pod(containers=None), "spec.containers: expected a non-empty list of containers, got null"),
        ({**pod(), "spec": {"schedulerName": "herder"}}, "spec.containers: expected a non-empty list of containers"),
        (pod(containers="main"), "spec.containers: expected a non-empty list of containers, got a str ('main')"),
        (pod(containers={"name": "main"}), "spec.containers: expected a non-empty list of containers, got a dict"),
        (pod(containers=[]), "spec.containers: expected a non-empty list of containers, got a list ([])"),
        (pod(containers=[None]), "spec.containers[0]: expected a container object, got null"),
        (pod(initContainers="setup"), "spec.initContainers: expected a list of containers, got a str ('setup')"),
        (pod(containers=[{"name": "main", "resources": "big"}]), "container 'main'.resources: expected an object"),
        (pod(containers=[{"name": "m", "resources": {"requests": [1]}}]), ".resources.requests: expected an object"),
        (pod(containers=[container("main", cpu="-2")]), "'main' requests: resource 'cpu': negative quantity '-2'"),
        (pod(overhead={"memory": "-1Gi"}), "spec.overhead: resource 'memory': negative quantity '-1Gi'"),
    ],
)
def test_a_pod_whose_resources_cannot_be_read_waits_with_a_reason_naming_field_and_value(
    malformed: dict[str, Any], named: str
) -> None:
    with pytest.raises(ConversionError) as refused:
        pod_resource(malformed)
    assert named in str(refused.value)
    assert "pod team/p" in str(refused.value)
    ask = pod_to_ask(malformed, namespace())
    assert any(named in problem for problem in ask.problems)


def test_negative_quantities_anywhere_in_a_namespace_annotation_are_refused_with_a_reason() -> None:
    ns = namespace(
        **{
            "yunikorn.apache.org/namespace.quota": '{"cpu": "-8", "memory": "64Gi"}',
            "yunikorn.apache.org/namespace.guaranteed": '{"memory": "-1Gi"}',
        }
    )
    assert TAG_QUOTA not in namespace_tags(ns) and TAG_GUARANTEED not in namespace_tags(ns)
    quota, guaranteed = namespace_problems(ns)
    assert quota.startswith("namespace team annotation yunikorn.apache.org/namespace.quota: resource 'cpu'")
    assert "negative quantity '-8'" in quota
    assert guaranteed.startswith("namespace team annotation yunikorn.apache.org/namespace.guaranteed: resource")
    assert "negative quantity '-1Gi'" in guaranteed
    legacy = namespace(**{"yunikorn.apache.org/namespace.max.cpu": "-8"})
    [problem] = namespace_problems(legacy)
    assert "annotation yunikorn.apache.org/namespace.max.cpu" in problem and "negative quantity" in problem
    assert pod_to_ask(pod(), legacy).problems == (problem,)


@pytest.mark.parametrize("text", ["{cpu:4, memory: 8Gi}", "{cpu: 4, memory: 8Gi}", '{"cpu": "4", "memory": "8Gi"}'])
def test_seed_002_shared_weight_in_the_designs_shorthand_or_json(text: str) -> None:
    # Seed 002, "API": `quota.scheduling.koordinator.sh/shared-weight: {cpu:4, memory: 8Gi}`.
    annotations = {"quota.scheduling.koordinator.sh/shared-weight": text}
    eq = {
        "metadata": {"name": "test", "namespace": "test", "annotations": annotations},
        "spec": {"max": {"cpu": "20", "memory": "40Gi"}},
    }
    assert quota_to_spec(eq).shared_weight == {"vcore": 4000, "memory": 8 * 2**30}


@pytest.mark.parametrize(("text", "named"), [("{cpu 4}", "is not .name: quantity."), ("cpu: 4", "neither JSON")])
def test_shared_weight_that_is_neither_json_nor_the_shorthand_is_refused_naming_it(text: str, named: str) -> None:
    annotations = {"quota.scheduling.koordinator.sh/shared-weight": text}
    eq = {"metadata": {"name": "t", "namespace": "t", "annotations": annotations}, "spec": {"max": {"cpu": "4"}}}
    with pytest.raises(ConversionError, match=named):
        quota_to_spec(eq)


def test_koordinators_group_quota_names_stand_for_herders_groups() -> None:
    for name, group in (("koordinator-default-quota", "default"), ("koordinator-system-quota", "system")):
        eq = {"metadata": {"name": name, "namespace": "koordinator-system"}, "spec": {}}
        assert quota_to_spec(eq).name == group


def test_pods_of_one_size_and_affinity_share_one_request_and_one_constraints_object() -> None:
    zone = {"key": "zone", "operator": "In", "values": ["a", "b"]}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [zone]}]}
        }
    }
    first, second = (pod(name, affinity=affinity) for name in ("p1", "p2"))
    bigger = pod("p3", affinity=affinity, containers=[container("main", cpu="2", memory="1Gi")])
    a, b, c = (pod_to_ask(p, namespace()) for p in (first, second, bigger))
    assert a.resource is b.resource and a.constraints is b.constraints
    assert c.resource is not a.resource and c.resource["vcore"] == 2000
    assert c.constraints is a.constraints


def test_kept_sizes_and_constraints_never_answer_for_a_pod_that_reads_differently() -> None:
    """Sizes and node constraints are kept by the fields as given (shim/convert/pod_size.py,
    constraints.py): a pod whose fields differ, or only equal them as another type, is read anew."""
    admitted = [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
    ]
    first = pod_to_ask(pod("k1", nodeSelector={"zone": "a"}, tolerations=admitted), namespace())
    again = pod_to_ask(pod("k2", nodeSelector={"zone": "a"}, tolerations=[dict(admitted[0])]), namespace())
    assert again.constraints is first.constraints
    assert [t.key for t in first.constraints.tolerations] == ["node.kubernetes.io/not-ready"]
    other_zone = pod_to_ask(pod("k3", nodeSelector={"zone": "b"}, tolerations=admitted), namespace())
    assert other_zone.constraints.node_selector == (("zone", "b"),)
    untolerated = pod_to_ask(pod("k4", nodeSelector={"zone": "a"}), namespace())
    assert untolerated.constraints.tolerations == ()
    # True equals 1 as a key, yet reads as "True": never answered from what 1 read as
    assert pod_to_ask(pod("k5", nodeSelector={"rank": 1}), namespace()).constraints.node_selector == (("rank", "1"),)
    as_bool = pod_to_ask(pod("k6", nodeSelector={"rank": True}), namespace())
    assert as_bool.constraints.node_selector == (("rank", "True"),)
    # a size read once is kept; a malformed one after it is still refused, naming the pod
    sized = pod_to_ask(pod("k7", containers=[container("main", cpu="300m", memory="1Gi")]), namespace())
    assert sized.resource["vcore"] == 300
    broken = pod_to_ask(pod("k8", containers=[container("main", cpu="300x", memory="1Gi")]), namespace())
    assert broken.problems and "k8" in broken.problems[0] and "300x" in broken.problems[0]
    as_number = pod_to_ask(pod("k9", containers=[container("main", cpu=0.3, memory="1Gi")]), namespace())
    assert as_number.resource["vcore"] == 300 and not as_number.problems


def test_pods_of_one_workload_share_their_user_and_labels_but_never_across_what_differs() -> None:
    who = {"yunikorn.apache.org/user.info": json.dumps({"user": "alice", "groups": ["ml"]})}
    labels = {"app": "train", "tier": "batch"}
    team, relabelled = namespace(), {"metadata": {"name": "team", "labels": {"env": "prod"}}}
    a, b = (pod_to_ask(pod(name, labels=dict(labels), annotations=dict(who)), team) for name in ("p1", "p2"))
    assert a.user is b.user and a.user == UserGroup("alice", ("ml",))
    assert a.pod is b.pod and dict(a.pod.labels) == labels
    other_labels = pod_to_ask(pod("p3", labels={"app": "train", "tier": "web"}), team)
    other_namespace = pod_to_ask(pod("p4", ns="lab", labels=dict(labels)), namespace("lab"))
    new_namespace_labels = pod_to_ask(pod("p5", labels=dict(labels)), relabelled)
    assert dict(other_labels.pod.labels) == {"app": "train", "tier": "web"}
    assert other_namespace.pod.namespace == "lab" and a.pod.namespace == "team"
    assert dict(new_namespace_labels.pod.namespace_labels) == {"env": "prod"} and not a.pod.namespace_labels
    bob = pod_to_ask(pod("p6", annotations={"yunikorn.apache.org/user.info": json.dumps({"user": "bob"})}), team)
    assert bob.user == UserGroup("bob") and a.user.user == "alice"
    # a pod with rules between pods keeps its own
    spread = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]
    ruled = pod_to_ask(pod("p7", labels=dict(labels), topologySpreadConstraints=spread), team)
    assert ruled.pod is not a.pod and len(ruled.pod.spread) == 1 and not a.pod.spread


def test_the_interner_starts_again_past_its_limit_and_keeps_values_equal() -> None:
    intern: Interner[tuple[int, ...]] = Interner(limit=2)
    one = intern((1,))
    assert intern((1,)) is one
    intern((2,))
    intern((3,))  # the table was full: it starts again
    assert len(intern) == 1
    again = intern((1,))
    assert again == one


def test_active_deadline_seconds_is_read_for_herder_and_foreign_pods() -> None:
    assert pod_to_ask(pod(schedulerName="herder", activeDeadlineSeconds=600), namespace()).active_deadline == 600.0
    assert pod_to_ask(pod(schedulerName="herder"), namespace()).active_deadline is None
    foreign = pod_to_allocation(pod(nodeName="n1", activeDeadlineSeconds=30), None)
    assert foreign.foreign == FOREIGN_DEFAULT and foreign.active_deadline == 30.0
    bound = pod_to_allocation(pod(nodeName="n1", schedulerName="herder", activeDeadlineSeconds=45), namespace())
    assert bound.active_deadline == 45.0


@pytest.mark.parametrize("value", [0, -3, 1.5, "60", True])
def test_a_bad_active_deadline_keeps_the_pod_pending_with_the_field_named(value: object) -> None:
    ask = pod_to_ask(pod(schedulerName="herder", activeDeadlineSeconds=value), namespace())
    assert ask.active_deadline is None
    assert ask.problems == (f"pod team/p spec.activeDeadlineSeconds: expected a positive whole number, got {value!r}",)
