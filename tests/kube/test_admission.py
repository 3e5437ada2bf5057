"""The pod and workload webhook: whose usage a pod is, which scheduler it asks for, which quota
labels it may carry, and who may say so."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.config.errors import SettingsError
from core.config.settings import Settings, parse_settings
from core.elastic.spec import ElasticQuotaSpec
from core.resources import Resource
from shim.convert.identity import ANNOTATION_USER_INFO, user_info
from shim.convert.quotas import LABEL_PREEMPTIBLE, LABEL_QUOTA_NAME
from shim.kube.admission.decisions import AdmissionPolicy, Decision, QuotaTree, review_pod, review_workload

ALICE = {"username": "alice", "uid": "u-1", "groups": ["team-a", "system:authenticated"]}
MALLORY = {"username": "mallory", "uid": "u-2", "groups": ["system:authenticated"]}
RS_CONTROLLER = {"username": "system:serviceaccount:kube-system:replicaset-controller", "groups": []}
DEPLOYMENT_CONTROLLER = {"username": "system:serviceaccount:kube-system:deployment-controller", "groups": []}
POLICY = AdmissionPolicy.from_settings(Settings())
OPTED_IN = {"metadata": {"name": "team-a", "labels": {"herder.io/scheduler": "true"}}}
TREE = QuotaTree(
    specs={
        "org": ElasticQuotaSpec("org", "team-a", max=Resource({"vcore": 8000}), is_parent=True),
        "team-a": ElasticQuotaSpec("team-a", "team-a", max=Resource({"vcore": 4000}), parent="org"),
    },
    pods_by_quota={},
)
FORGED = json.dumps({"user": "bob", "groups": ["admins"]})


def pod(
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    scheduler: str | None = "default-scheduler",
    owner: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "job-1", "namespace": "team-a"}
    if annotations:
        meta["annotations"] = annotations
    if labels:
        meta["labels"] = labels
    if owner:
        meta["ownerReferences"] = [{"kind": "ReplicaSet", "name": "web-1", "controller": True, "uid": "r"}]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def create(obj: dict[str, Any], who: dict[str, Any] = ALICE) -> dict[str, Any]:
    return {"operation": "CREATE", "namespace": "team-a", "userInfo": who, "object": obj, "oldObject": None}


def update(old: dict[str, Any], new: dict[str, Any], who: dict[str, Any] = ALICE) -> dict[str, Any]:
    return {"operation": "UPDATE", "namespace": "team-a", "userInfo": who, "object": new, "oldObject": old}


def stamped(decision: Decision) -> dict[str, Any]:
    assert decision.allowed, decision.message
    annotations = decision.patch["metadata"]["annotations"]
    parsed: dict[str, Any] = json.loads(annotations[ANNOTATION_USER_INFO])
    return parsed


# --- identity on pods -----------------------------------------------------------------------


def test_new_pod_is_accounted_to_the_user_who_created_it() -> None:
    decision = review_pod(create(pod()), POLICY, TREE, None)
    assert stamped(decision) == {"user": "alice", "groups": ["team-a", "system:authenticated"]}


def test_stamped_identity_is_what_the_scheduler_reads_back() -> None:
    decision = review_pod(create(pod()), POLICY, TREE, None)
    annotated = pod(annotations=dict(decision.patch["metadata"]["annotations"]))
    read = user_info(annotated)
    assert (read.user, read.groups) == ("alice", ("team-a", "system:authenticated"))


def test_untrusted_user_cannot_run_a_pod_as_somebody_else() -> None:
    decision = review_pod(create(pod({ANNOTATION_USER_INFO: FORGED}), MALLORY), POLICY, TREE, None)
    assert not decision.allowed
    assert decision.code == 403
    assert "pod team-a/job-1" in decision.message
    assert "mallory" in decision.message and "admission.trustedUsers" in decision.message


def test_untrusted_user_cannot_forge_even_through_a_fake_owner_reference() -> None:
    forged = pod({ANNOTATION_USER_INFO: FORGED}, owner=True)
    assert not review_pod(create(forged, MALLORY), POLICY, TREE, None).allowed


def test_controller_pod_keeps_the_identity_stamped_on_its_workload_template() -> None:
    from_template = pod({ANNOTATION_USER_INFO: json.dumps({"user": "alice", "groups": []})}, owner=True)
    decision = review_pod(create(from_template, RS_CONTROLLER), POLICY, TREE, None)
    assert decision.allowed
    assert "metadata" not in decision.patch


def test_without_controller_trust_controller_pods_are_accounted_to_the_controller() -> None:
    policy = AdmissionPolicy.from_settings(parse_settings({"admission.trustControllers": "false"}))
    from_template = pod({ANNOTATION_USER_INFO: json.dumps({"user": "alice", "groups": []})}, owner=True)
    decision = review_pod(create(from_template, RS_CONTROLLER), policy, TREE, None)
    assert stamped(decision)["user"] == RS_CONTROLLER["username"]


def test_trusted_user_may_submit_on_behalf_of_another_user() -> None:
    policy = AdmissionPolicy.from_settings(parse_settings({"admission.trustedUsers": "gateway-.*"}))
    gateway = {"username": "gateway-1", "groups": []}
    decision = review_pod(create(pod({ANNOTATION_USER_INFO: FORGED}), gateway), policy, TREE, None)
    assert decision.allowed and "metadata" not in decision.patch


def test_trusted_user_patterns_must_match_the_whole_username() -> None:
    policy = AdmissionPolicy.from_settings(parse_settings({"admission.trustedUsers": "gateway"}))
    impostor = {"username": "not-the-gateway-really", "groups": []}
    assert not review_pod(create(pod({ANNOTATION_USER_INFO: FORGED}), impostor), policy, TREE, None).allowed


def test_trusted_user_still_cannot_supply_an_unreadable_identity() -> None:
    decision = review_pod(create(pod({ANNOTATION_USER_INFO: "alice"}), RS_CONTROLLER), POLICY, TREE, None)
    assert not decision.allowed and decision.code == 400
    assert ANNOTATION_USER_INFO in decision.message and "'alice'" in decision.message


def test_nobody_may_change_a_pods_identity_afterwards() -> None:
    old = pod({ANNOTATION_USER_INFO: json.dumps({"user": "alice", "groups": []})})
    for who in (ALICE, RS_CONTROLLER):
        decision = review_pod(update(old, pod({ANNOTATION_USER_INFO: FORGED}), who), POLICY, TREE, None)
        assert not decision.allowed
        assert "cannot change" in decision.message and "pod team-a/job-1" in decision.message
    removed = review_pod(update(old, pod()), POLICY, TREE, None)
    assert not removed.allowed


def test_updates_that_leave_identity_and_labels_alone_pass_untouched() -> None:
    old = pod({ANNOTATION_USER_INFO: json.dumps({"user": "alice", "groups": []})}, labels={"app": "x"})
    new = pod({ANNOTATION_USER_INFO: json.dumps({"user": "alice", "groups": []})}, labels={"app": "y"})
    assert review_pod(update(old, new), POLICY, TREE, None) == Decision()


# --- quota labels on pods --------------------------------------------------------------------


def test_pod_may_not_name_a_parent_quota() -> None:
    decision = review_pod(create(pod(labels={LABEL_QUOTA_NAME: "org"})), POLICY, TREE, None)
    assert not decision.allowed
    assert "org" in decision.message and "parent quota" in decision.message


def test_pod_naming_a_leaf_quota_is_admitted() -> None:
    assert review_pod(create(pod(labels={LABEL_QUOTA_NAME: "team-a"})), POLICY, TREE, None).allowed


def test_preemptible_label_cannot_change() -> None:
    old = pod(labels={LABEL_PREEMPTIBLE: "false"})
    decision = review_pod(update(old, pod(labels={LABEL_PREEMPTIBLE: "true"})), POLICY, TREE, None)
    assert not decision.allowed and "preemptible" in decision.message
    removed = review_pod(update(old, pod()), POLICY, TREE, None)
    assert not removed.allowed


def test_pods_are_admitted_while_the_quota_tree_is_not_loaded() -> None:
    decision = review_pod(create(pod(labels={LABEL_QUOTA_NAME: "org"})), POLICY, None, None)
    assert stamped(decision)["user"] == "alice"


# --- scheduler name ----------------------------------------------------------------------------


def test_pod_in_an_opted_in_namespace_is_given_to_herder() -> None:
    for scheduler in ("default-scheduler", "", None):
        decision = review_pod(create(pod(scheduler=scheduler)), POLICY, TREE, OPTED_IN)
        assert decision.patch["spec"] == {"schedulerName": "herder"}


def test_configured_scheduler_name_is_used() -> None:
    policy = AdmissionPolicy.from_settings(parse_settings({"scheduler.name": "batch"}))
    assert review_pod(create(pod()), policy, TREE, OPTED_IN).patch["spec"] == {"schedulerName": "batch"}


def test_pod_naming_another_scheduler_keeps_it() -> None:
    decision = review_pod(create(pod(scheduler="volcano")), POLICY, TREE, OPTED_IN)
    assert "spec" not in decision.patch


def test_namespaces_without_the_label_or_opted_out_keep_the_default_scheduler() -> None:
    opted_out = {"metadata": {"name": "team-a", "labels": {"herder.io/scheduler": "false"}}}
    for namespace in (None, {"metadata": {"name": "team-a"}}, opted_out):
        assert "spec" not in review_pod(create(pod()), POLICY, TREE, namespace).patch


# --- workloads ---------------------------------------------------------------------------------


def deployment(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    template: dict[str, Any] = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}
    if annotations:
        template["metadata"]["annotations"] = annotations
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "team-a"},
        "spec": {"template": template},
    }


def cronjob() -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "team-a"},
        "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}},
    }


def test_workload_template_carries_its_creators_identity() -> None:
    patch = review_workload(create(deployment()), POLICY).patch
    annotations = patch["spec"]["template"]["metadata"]["annotations"]
    assert json.loads(annotations[ANNOTATION_USER_INFO])["user"] == "alice"


def test_cronjob_identity_goes_on_the_jobs_pod_template() -> None:
    patch = review_workload(create(cronjob()), POLICY).patch
    annotations = patch["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["annotations"]
    assert json.loads(annotations[ANNOTATION_USER_INFO])["user"] == "alice"


def test_untrusted_user_cannot_forge_identity_through_a_workload() -> None:
    decision = review_workload(create(deployment({ANNOTATION_USER_INFO: FORGED}), MALLORY), POLICY)
    assert not decision.allowed and decision.code == 403
    assert "Deployment team-a/web" in decision.message


def test_controller_copying_a_template_keeps_the_identity() -> None:
    replica_set = deployment({ANNOTATION_USER_INFO: FORGED}) | {"kind": "ReplicaSet"}
    assert review_workload(create(replica_set, DEPLOYMENT_CONTROLLER), POLICY) == Decision()


def test_untrusted_user_cannot_rewrite_a_workloads_identity() -> None:
    old = deployment({ANNOTATION_USER_INFO: json.dumps({"user": "alice", "groups": []})})
    decision = review_workload(update(old, deployment({ANNOTATION_USER_INFO: FORGED}), MALLORY), POLICY)
    assert not decision.allowed
    unchanged = review_workload(update(old, old, MALLORY), POLICY)
    assert unchanged == Decision()


def test_workload_update_does_not_stamp_a_template_that_never_had_an_identity() -> None:
    assert review_workload(update(deployment(), deployment()), POLICY) == Decision()


# --- every kind with a pod template -----------------------------------------------------------

BUILT_IN = {
    "Deployment": ("apps/v1", ["spec", "template"]),
    "ReplicaSet": ("apps/v1", ["spec", "template"]),
    "StatefulSet": ("apps/v1", ["spec", "template"]),
    "DaemonSet": ("apps/v1", ["spec", "template"]),
    "Job": ("batch/v1", ["spec", "template"]),
    "CronJob": ("batch/v1", ["spec", "jobTemplate", "spec", "template"]),
    "ReplicationController": ("v1", ["spec", "template"]),
    "PodTemplate": ("v1", ["template"]),
}


def workload(kind: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    api_version, path = BUILT_IN[kind]
    template: dict[str, Any] = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": []}}
    if annotations:
        template["metadata"]["annotations"] = annotations
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w", "namespace": "team-a"}}
    holder = obj
    for key in path[:-1]:
        holder = holder.setdefault(key, {})
    holder[path[-1]] = template
    return obj


def at(obj: Any, path: list[str]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


@pytest.mark.parametrize("kind", sorted(BUILT_IN))
def test_every_built_in_kind_refuses_a_forged_template_identity(kind: str) -> None:
    decision = review_workload(create(workload(kind, {ANNOTATION_USER_INFO: FORGED}), MALLORY), POLICY)
    assert not decision.allowed and decision.code == 403
    assert f"{kind} team-a/w" in decision.message


@pytest.mark.parametrize("kind", sorted(BUILT_IN))
def test_every_built_in_kind_stamps_its_creator_on_the_template(kind: str) -> None:
    patch = review_workload(create(workload(kind)), POLICY).patch
    annotations = at(patch, [*BUILT_IN[kind][1], "metadata", "annotations"])
    assert json.loads(annotations[ANNOTATION_USER_INFO])["user"] == "alice"


@pytest.mark.parametrize("kind", sorted(BUILT_IN))
def test_every_built_in_kind_refuses_a_rewritten_template_identity(kind: str) -> None:
    old = workload(kind, {ANNOTATION_USER_INFO: json.dumps({"user": "alice", "groups": []})})
    decision = review_workload(update(old, workload(kind, {ANNOTATION_USER_INFO: FORGED}), MALLORY), POLICY)
    assert not decision.allowed and decision.code == 403


CUSTOM = AdmissionPolicy.from_settings(
    parse_settings(
        {
            "admission.templatePaths": "RayCluster=spec.headGroupSpec.template,"
            "RayCluster=spec.workerGroupSpecs.*.template,"
            "MPIJob=spec.mpiReplicaSpecs.*.template,"
            "SparkApplication=spec.driver.annotations,SparkApplication=spec.executor.annotations"
        }
    )
)


def ray(worker_annotations: dict[str, str] | None = None) -> dict[str, Any]:
    worker: dict[str, Any] = {"template": {"spec": {}}}
    if worker_annotations:
        worker["template"]["metadata"] = {"annotations": worker_annotations}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "r", "namespace": "team-a"},
        "spec": {"headGroupSpec": {"template": {"spec": {}}}, "workerGroupSpecs": [{"template": {}}, worker]},
    }


def test_a_custom_kinds_templates_in_a_list_are_all_stamped() -> None:
    patch = review_workload(create(ray()), CUSTOM).patch
    head = patch["spec"]["headGroupSpec"]["template"]["metadata"]["annotations"]
    workers = patch["spec"]["workerGroupSpecs"]
    assert len(workers) == 2
    for stamped_here in [head, *(w["template"]["metadata"]["annotations"] for w in workers)]:
        assert json.loads(stamped_here[ANNOTATION_USER_INFO])["user"] == "alice"


def test_a_custom_kind_refuses_a_forged_identity_in_any_of_its_templates() -> None:
    decision = review_workload(create(ray({ANNOTATION_USER_INFO: FORGED}), MALLORY), CUSTOM)
    assert not decision.allowed and "RayCluster team-a/r" in decision.message
    assert review_workload(create(ray({ANNOTATION_USER_INFO: FORGED}), MALLORY), POLICY) == Decision()  # not listed


def test_mpi_replica_specs_by_name_and_spark_annotations_are_stamped() -> None:
    mpi = {
        "kind": "MPIJob",
        "metadata": {"name": "m", "namespace": "team-a"},
        "spec": {"mpiReplicaSpecs": {"Launcher": {"template": {}}, "Worker": {"template": {}}}},
    }
    patch = review_workload(create(mpi), CUSTOM).patch
    for role in ("Launcher", "Worker"):
        stamp = patch["spec"]["mpiReplicaSpecs"][role]["template"]["metadata"]["annotations"][ANNOTATION_USER_INFO]
        assert json.loads(stamp)["user"] == "alice"
    spark = {"kind": "SparkApplication", "metadata": {"name": "s"}, "spec": {"driver": {}, "executor": {}}}
    patch = review_workload(create(spark), CUSTOM).patch
    assert set(patch["spec"]) == {"driver", "executor"}
    forged = {**spark, "spec": {"driver": {"annotations": {ANNOTATION_USER_INFO: FORGED}}, "executor": {}}}
    assert not review_workload(create(forged, MALLORY), CUSTOM).allowed


def test_a_malformed_template_path_setting_is_refused_naming_it() -> None:
    with pytest.raises(SettingsError, match=r"admission\.templatePaths: 'RayCluster': expected Kind=dotted\.path"):
        parse_settings({"admission.templatePaths": "RayCluster"})


# --- preemption opt-out from the PriorityClass ---------------------------------------------

KEEP = {"metadata": {"name": "keep", "annotations": {"yunikorn.apache.org/allow-preemption": "false"}}, "value": 10}


def test_a_new_pod_gets_its_priority_class_preemption_opt_out() -> None:
    decision = review_pod(create(pod()), POLICY, TREE, None, KEEP)
    assert decision.patch["metadata"]["annotations"]["yunikorn.apache.org/allow-preemption"] == "false"
    assert stamped(decision)["user"] == "alice"  # beside the identity, not instead of it


def test_a_pod_own_allow_preemption_wins_over_its_class() -> None:
    own = pod(annotations={"yunikorn.apache.org/allow-preemption": "true"})
    decision = review_pod(create(own), POLICY, TREE, None, KEEP)
    assert "yunikorn.apache.org/allow-preemption" not in decision.patch["metadata"]["annotations"]
    plain = review_pod(create(pod()), POLICY, TREE, None, {"metadata": {"name": "plain"}, "value": 0})
    assert "yunikorn.apache.org/allow-preemption" not in plain.patch["metadata"]["annotations"]
