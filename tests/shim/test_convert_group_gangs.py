"""The PodGroup APIs read into the core's gang: a pod names a group object, the object's
definition gives the gang (minimum of pods, minimum resources, timeout, Volcano's task
minimums), and the group is the pod's application. A group that does not exist (yet) or cannot
be read keeps the pod waiting, naming the object and the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from core.gang.spec import RETRY, GangTopology
from core.resources import Resource
from shim.convert.gang_sources import GROUP_KINDS, GroupKey, kind_of
from shim.convert.gangs.pod_gang import GroupDefinition
from shim.convert.pods import pod_to_ask


def pod(
    name: str = "w-0",
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ml",
            "uid": f"uid-{name}",
            "labels": dict(labels or {}),
            "annotations": dict(annotations or {}),
        },
        "spec": {
            "schedulerName": "herder",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
            **spec,
        },
    }


def lookup(*objects: Mapping[str, Any]) -> Any:
    """The groups the shim knows, read as the watch reads them."""
    known: dict[GroupKey, GroupDefinition] = {}
    for obj in objects:
        kind = kind_of(obj)
        assert kind is not None, obj
        known[kind.key(obj)] = kind.definition(obj)
    return known.get


def coscheduling_group(name: str = "train", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": spec,
    }


def volcano_group(name: str = "tf", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": spec,
    }


def kubernetes_group(name: str = "run", version: str = "v1alpha2", **policy: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"scheduling.k8s.io/{version}",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"schedulingPolicy": policy},
    }


def workload(name: str = "job", *groups: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"podGroups": list(groups)},
    }


def test_a_scheduler_plugins_pod_group_gives_its_minimum_resources_and_timeout_to_every_pod() -> None:
    group = coscheduling_group(minMember=4, minResources={"cpu": "4", "memory": "8Gi"}, scheduleTimeoutSeconds=90)
    ask = pod_to_ask(pod(labels={"scheduling.x-k8s.io/pod-group": "train"}), None, groups=lookup(group))
    assert ask.problems == ()
    assert ask.application_id == "ml-train" and ask.task_group == "train"
    spec = ask.gang
    assert spec is not None and spec.from_pods and spec.style == RETRY
    assert (spec.min_members, spec.timeout) == (4, 90.0)
    assert spec.min_resources == Resource({"vcore": 4000, "memory": 8 * 1024**3})
    assert spec.source == "scheduler-plugins PodGroup ml/train"


def test_the_older_pod_group_label_and_api_group_are_read_alike() -> None:
    older = {**coscheduling_group(minMember=2), "apiVersion": "scheduling.sigs.k8s.io/v1alpha1"}
    ask = pod_to_ask(pod(labels={"pod-group.scheduling.sigs.k8s.io": "train"}), None, groups=lookup(older))
    assert ask.gang is not None and ask.gang.min_members == 2 and ask.gang.timeout == 60.0
    assert ask.application_id == "ml-train"


def test_a_volcano_pod_group_gives_each_tasks_minimum_and_the_pod_its_task() -> None:
    group = volcano_group(minMember=3, minTaskMember={"ps": 1, "worker": 2})
    annotations = {"scheduling.k8s.io/group-name": "tf", "volcano.sh/task-spec": "worker"}
    ask = pod_to_ask(pod(annotations=annotations), None, groups=lookup(group))
    assert ask.application_id == "ml-tf" and ask.task_group == "worker"
    assert ask.gang is not None
    assert [(g.name, g.min_member) for g in ask.gang.groups] == [("ps", 1), ("worker", 2)]
    assert ask.gang.members == 3


@pytest.mark.parametrize("version", ["v1alpha2", "v1alpha3", "v1beta1"])
def test_a_kubernetes_pod_group_gang_policy_gives_its_min_count(version: str) -> None:
    group = kubernetes_group(version=version, gang={"minCount": 5})
    ask = pod_to_ask(pod(schedulingGroup={"podGroupName": "run"}), None, groups=lookup(group))
    assert ask.gang is not None and ask.gang.min_members == 5 and ask.gang.timeout == 300.0
    assert ask.application_id == "ml-run"


def test_a_basic_policy_is_no_gang_but_the_group_is_still_the_application() -> None:
    ask = pod_to_ask(pod(schedulingGroup={"podGroupName": "run"}), None, groups=lookup(kubernetes_group(basic={})))
    assert ask.problems == () and ask.gang is None and ask.task_group == ""
    assert ask.application_id == "ml-run"


def test_each_workload_pod_group_and_replica_is_a_gang_of_its_own() -> None:
    job = workload(
        "job", {"name": "workers", "policy": {"gang": {"minCount": 2}}}, {"name": "driver", "policy": {"basic": {}}}
    )
    groups = lookup(job)
    ref = {"name": "job", "podGroup": "workers", "podGroupReplicaKey": "1"}
    first = pod_to_ask(pod("a", workloadRef=ref), None, groups=groups)
    other = pod_to_ask(pod("b", workloadRef={**ref, "podGroupReplicaKey": "2"}), None, groups=groups)
    driver = pod_to_ask(pod("c", workloadRef={"name": "job", "podGroup": "driver"}), None, groups=groups)
    assert first.gang is not None and first.gang.min_members == 2
    assert first.application_id == "ml-job-workers-1" and other.application_id == "ml-job-workers-2"
    assert driver.gang is None and driver.application_id == "ml-job-driver"


def test_a_pod_naming_a_group_that_does_not_exist_yet_waits_naming_it() -> None:
    ask = pod_to_ask(pod(labels={"scheduling.x-k8s.io/pod-group": "train"}), None)
    assert ask.problems == ("waits for PodGroup ml/train (scheduler-plugins), which does not exist yet",)
    assert ask.application_id == "ml-train"


def test_a_pod_naming_a_pod_group_the_workload_does_not_define_waits_saying_which_it_defines() -> None:
    job = workload("job", {"name": "workers", "policy": {"gang": {"minCount": 2}}})
    ask = pod_to_ask(pod(workloadRef={"name": "job", "podGroup": "ps"}), None, groups=lookup(job))
    assert ask.problems == ("names pod group 'ps' of Workload ml/job, which defines workers",)


LABELLED = {"labels": {"scheduling.x-k8s.io/pod-group": "train"}}
ANNOTATED = {"annotations": {"scheduling.k8s.io/group-name": "train"}}
GROUPED = {"schedulingGroup": {"podGroupName": "train"}}


@pytest.mark.parametrize(
    ("group", "member", "said"),
    [
        (
            coscheduling_group(minMember=-1),
            LABELLED,
            "scheduler-plugins PodGroup ml/train spec.minMember: must be a whole number >= 0, got -1",
        ),
        (coscheduling_group(minMember=2, minResources={"cpu": "lots"}), LABELLED, "spec.minResources: resource 'cpu'"),
        (
            coscheduling_group(minMember=2, scheduleTimeoutSeconds=0),
            LABELLED,
            "spec.scheduleTimeoutSeconds: must be a whole number >= 1",
        ),
        (
            volcano_group("train", minMember=2, minTaskMember={"ps": "one"}),
            ANNOTATED,
            "Volcano PodGroup ml/train spec.minTaskMember.ps: must be a whole number",
        ),
        (kubernetes_group("train"), GROUPED, "spec.schedulingPolicy: exactly one of basic or gang must be set"),
        (
            kubernetes_group("train", gang={"minCount": 0}),
            GROUPED,
            "Kubernetes PodGroup ml/train spec.schedulingPolicy.gang.minCount: must be a whole number >= 1",
        ),
    ],
)
def test_a_group_that_cannot_be_read_keeps_its_pods_waiting_naming_the_field(
    group: dict[str, Any], member: dict[str, Any], said: str
) -> None:
    ask = pod_to_ask(pod(**member), None, groups=lookup(group))
    assert len(ask.problems) == 1 and said in ask.problems[0], ask.problems
    assert ask.problems[0].startswith("its gang cannot be read: ")


def test_a_pod_with_yunikorns_gang_annotations_is_read_by_them_whatever_group_it_names() -> None:
    annotations = {
        "yunikorn.apache.org/task-group-name": "w",
        "yunikorn.apache.org/task-groups": '[{"name": "w", "minMember": 2, "minResource": {"cpu": "1"}}]',
    }
    ask = pod_to_ask(
        pod(labels={"scheduling.x-k8s.io/pod-group": "train", "applicationId": "spark-1"}, annotations=annotations),
        None,
        groups=lookup(coscheduling_group(minMember=4)),
    )
    assert ask.application_id == "spark-1" and ask.gang is not None and not ask.gang.from_pods


def test_every_kind_is_known_by_its_api_version_and_kind() -> None:
    names = {kind.name for kind in GROUP_KINDS}
    assert names == {"scheduler-plugins PodGroup", "Volcano PodGroup", "Kubernetes PodGroup", "Kubernetes Workload"}
    assert kind_of({"apiVersion": "scheduling.k8s.io/v1", "kind": "PodGroup"}) is None
    assert kind_of({"apiVersion": "example.com/v1alpha1", "kind": "PodGroup"}) is None


RACK = "topology.example.com/rack"


@pytest.mark.parametrize("version", ["v1alpha2", "v1alpha3", "v1beta1"])
def test_a_kubernetes_pod_groups_topology_constraint_keeps_its_gang_in_one_domain(version: str) -> None:
    group = kubernetes_group("train", version=version, gang={"minCount": 4})
    group["spec"]["schedulingConstraints"] = {"topology": [{"key": RACK}]}
    ask = pod_to_ask(pod(**GROUPED), None, groups=lookup(group))
    assert ask.problems == ()
    assert ask.gang is not None and ask.gang.topology == GangTopology(RACK, required=True)


@pytest.mark.parametrize(
    ("constraints", "said"),
    [
        ({"topology": [{"key": RACK}, {"key": "topology.kubernetes.io/zone"}]}, "must be a list of one {key"),
        ({"topology": [{"key": "not a label!"}]}, "spec.schedulingConstraints.topology[0].key: expected a node label"),
        ({"topology": [{}]}, "spec.schedulingConstraints.topology[0].key: expected a node label key"),
        ("rack", "spec.schedulingConstraints: must be an object with topology"),
    ],
)
def test_a_topology_constraint_that_cannot_be_read_keeps_the_pods_waiting_naming_the_field(
    constraints: Any, said: str
) -> None:
    group = kubernetes_group("train", gang={"minCount": 2})
    group["spec"]["schedulingConstraints"] = constraints
    ask = pod_to_ask(pod(**GROUPED), None, groups=lookup(group))
    assert len(ask.problems) == 1 and said in ask.problems[0], ask.problems


@pytest.mark.parametrize(
    ("group", "member"),
    [
        (coscheduling_group(minMember=2), LABELLED),
        (volcano_group("train", minMember=2), ANNOTATED),
        (kubernetes_group("train", gang={"minCount": 2}), GROUPED),
        (
            workload("train", {"name": "w", "policy": {"gang": {"minCount": 2}}}),
            {"workloadRef": {"name": "train", "podGroup": "w"}},
        ),
    ],
)
@pytest.mark.parametrize("required", [True, False])
def test_kueues_topology_annotations_on_the_pods_of_any_group_give_its_gang_a_topology(
    group: dict[str, Any], member: dict[str, Any], required: bool
) -> None:
    key = "kueue.x-k8s.io/podset-required-topology" if required else "kueue.x-k8s.io/podset-preferred-topology"
    fields = {**member, "annotations": {**member.get("annotations", {}), key: RACK}}
    ask = pod_to_ask(pod(**fields), None, groups=lookup(group))
    assert ask.problems == ()
    assert ask.gang is not None and ask.gang.topology == GangTopology(RACK, required)


def test_a_kubernetes_pod_groups_own_constraint_wins_over_kueues_annotation() -> None:
    group = kubernetes_group("train", gang={"minCount": 2})
    group["spec"]["schedulingConstraints"] = {"topology": [{"key": RACK}]}
    fields = {**GROUPED, "annotations": {"kueue.x-k8s.io/podset-preferred-topology": "topology.kubernetes.io/zone"}}
    ask = pod_to_ask(pod(**fields), None, groups=lookup(group))
    assert ask.gang is not None and ask.gang.topology == GangTopology(RACK, required=True)


def test_a_bad_kueue_annotation_on_a_groups_pod_keeps_it_waiting_naming_the_annotation() -> None:
    fields = {**LABELLED, "annotations": {"kueue.x-k8s.io/podset-required-topology": "no good!"}}
    ask = pod_to_ask(pod(**fields), None, groups=lookup(coscheduling_group(minMember=2)))
    assert len(ask.problems) == 1
    assert "pod ml/w-0 annotation kueue.x-k8s.io/podset-required-topology: expected a node label key" in ask.problems[0]


def test_volcanos_network_topology_is_named_as_not_read_on_each_pod_and_the_gang_still_forms() -> None:
    group = volcano_group("train", minMember=2, networkTopology={"mode": "hard", "highestTierAllowed": 1})
    ask = pod_to_ask(pod(**ANNOTATED), None, groups=lookup(group))
    assert ask.problems == () and ask.gang is not None and ask.gang.topology is None
    assert len(ask.notices) == 1
    assert "Volcano PodGroup ml/train spec.networkTopology is not read" in ask.notices[0]
