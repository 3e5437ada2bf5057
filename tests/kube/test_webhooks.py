"""A real kopf operator serves Herder's webhooks: raw AdmissionReview POSTs over HTTP get the
verdicts, messages and JSONPatches the API server would apply."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import kopf
import pytest

from core.config.settings import Settings
from core.elastic.spec import ElasticQuotaSpec
from core.resources import Resource
from shim.convert.identity import ANNOTATION_USER_INFO
from shim.convert.quotas import LABEL_PREEMPTIBLE
from shim.kube.admission.decisions import QuotaTree
from shim.kube.admission.webhooks import (
    MUTATE_POD,
    MUTATE_WORKLOAD,
    VALIDATE_QUOTA,
    WebhookDeps,
    register_webhooks,
    webhook_server,
)
from tests.kube.kmock_thread import KmockThread

ALICE = {"username": "alice", "uid": "1", "groups": ["team-a"]}
MALLORY = {"username": "mallory", "uid": "2", "groups": []}


@dataclass
class World:
    """What the operator's webhooks read; tests change it between requests."""

    quotas: QuotaTree | None = field(default_factory=lambda: QuotaTree({}, {}))
    namespaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    priority_classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    url: str = ""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    world = World()
    with KmockThread() as api:
        registry = kopf.OperatorRegistry()

        @kopf.on.login(registry=registry)
        def login(**_: Any) -> kopf.ConnectionInfo:
            return kopf.ConnectionInfo(server=api.url)

        deps = WebhookDeps(
            settings=Settings,
            quota_tree=lambda: world.quotas,
            namespace=world.namespaces.get,
            priority_class=world.priority_classes.get,
        )
        register_webhooks(registry, deps)
        port = _free_port()
        settings = kopf.OperatorSettings()
        settings.admission.server = webhook_server(port, insecure=True, addr="127.0.0.1", deps=deps)
        settings.posting.enabled = False
        stop = threading.Event()
        operator = threading.Thread(
            target=lambda: asyncio.run(
                kopf.operator(registry=registry, settings=settings, clusterwide=True, standalone=True, stop_flag=stop)
            ),
            daemon=True,
        )
        operator.start()
        world.url = f"http://127.0.0.1:{port}"
        _wait_until_serving(world.url)
        yield world
        stop.set()
        operator.join(30)


def _wait_until_serving(url: str) -> None:
    for _ in range(300):
        try:
            urllib.request.urlopen(urllib.request.Request(f"{url}/", method="GET"), timeout=1)
        except urllib.error.HTTPError:
            return  # the server answers (GET is not a route): it is listening
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the webhook server never started listening")


def review(world: World, path: str, request: dict[str, Any]) -> dict[str, Any]:
    """POST one AdmissionReview as the API server does; the response part of the answer."""
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "review-1", "dryRun": False, "options": None, **request},
    }
    sent = urllib.request.Request(
        f"{world.url}/{path}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(sent, timeout=10) as answer:
        reply = json.loads(answer.read())
    assert reply["response"]["uid"] == "review-1"
    response: dict[str, Any] = reply["response"]
    return response


def json_patch(response: dict[str, Any]) -> list[dict[str, Any]]:
    assert response.get("patchType") == "JSONPatch"
    ops: list[dict[str, Any]] = json.loads(base64.b64decode(response["patch"]))
    return ops


def pod_request(operation: str, user: dict[str, Any], pod: dict[str, Any], old: Any = None) -> dict[str, Any]:
    return {
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": "team-a",
        "name": pod["metadata"].get("name", ""),
        "operation": operation,
        "userInfo": user,
        "object": pod,
        "oldObject": old,
    }


def a_pod(annotations: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "job-1", "namespace": "team-a", "labels": labels or {}}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"schedulerName": "default-scheduler", "containers": [{"name": "c", "image": "x"}]},
    }


def quota_request(operation: str, obj: Any, old: Any = None) -> dict[str, Any]:
    named = obj or old
    return {
        "kind": {"group": "scheduling.sigs.k8s.io", "version": "v1alpha1", "kind": "ElasticQuota"},
        "resource": {"group": "scheduling.sigs.k8s.io", "version": "v1alpha1", "resource": "elasticquotas"},
        "namespace": named["metadata"]["namespace"],
        "name": named["metadata"]["name"],
        "operation": operation,
        "userInfo": {"username": "admin", "groups": ["system:masters"]},
        "object": obj,
        "oldObject": old,
    }


def a_quota(name: str, min_cpu: str, max_cpu: str, parent: str = "") -> dict[str, Any]:
    labels = {"quota.scheduling.koordinator.sh/parent": parent} if parent else {}
    return {
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": name, "namespace": name, "labels": labels},
        "spec": {"min": {"cpu": min_cpu}, "max": {"cpu": max_cpu}},
    }


def test_new_pod_gets_its_creator_and_herder_as_scheduler(world: World) -> None:
    world.namespaces["team-a"] = {"metadata": {"name": "team-a", "labels": {"herder.io/scheduler": "true"}}}
    try:
        response = review(world, MUTATE_POD, pod_request("CREATE", ALICE, a_pod()))
    finally:
        world.namespaces.clear()
    assert response["allowed"] is True
    ops = {op["path"]: op for op in json_patch(response)}
    stamped = ops["/metadata/annotations"]
    assert stamped["op"] == "add"
    assert json.loads(stamped["value"][ANNOTATION_USER_INFO]) == {"user": "alice", "groups": ["team-a"]}
    assert ops["/spec/schedulerName"] == {"op": "replace", "path": "/spec/schedulerName", "value": "herder"}


def test_pod_in_a_namespace_that_did_not_opt_in_keeps_its_scheduler(world: World) -> None:
    response = review(world, MUTATE_POD, pod_request("CREATE", ALICE, a_pod(labels={"app": "x"})))
    assert [op["path"] for op in json_patch(response)] == ["/metadata/annotations"]


def test_a_pod_gets_the_preemption_opt_out_of_its_priority_class(world: World) -> None:
    world.priority_classes["keep"] = {
        "metadata": {"name": "keep", "annotations": {"yunikorn.apache.org/allow-preemption": "false"}},
        "value": 100,
    }
    pod = a_pod()
    pod["spec"]["priorityClassName"] = "keep"
    try:
        response = review(world, MUTATE_POD, pod_request("CREATE", ALICE, pod))
    finally:
        world.priority_classes.clear()
    annotations = {op["path"]: op for op in json_patch(response)}["/metadata/annotations"]["value"]
    assert annotations["yunikorn.apache.org/allow-preemption"] == "false"


def test_forged_identity_is_refused_with_the_reason(world: World) -> None:
    forged = a_pod({ANNOTATION_USER_INFO: json.dumps({"user": "bob", "groups": []})})
    response = review(world, MUTATE_POD, pod_request("CREATE", MALLORY, forged))
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    assert "pod team-a/job-1" in response["status"]["message"]
    assert "mallory may not set annotation yunikorn.apache.org/user.info" in response["status"]["message"]
    assert "patch" not in response


def test_preemptible_label_change_is_refused(world: World) -> None:
    old = a_pod(labels={LABEL_PREEMPTIBLE: "false"})
    response = review(world, MUTATE_POD, pod_request("UPDATE", ALICE, a_pod(), old))
    assert response["allowed"] is False
    assert "preemptible label cannot change" in response["status"]["message"]


def test_workload_template_is_stamped_through_the_workload_route(world: World) -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "team-a"},
        "spec": {"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}},
    }
    request = {
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "namespace": "team-a",
        "name": "web",
        "operation": "CREATE",
        "userInfo": ALICE,
        "object": deployment,
        "oldObject": None,
    }
    [op] = json_patch(review(world, MUTATE_WORKLOAD, request))
    assert op["path"] == "/spec/template/metadata/annotations"
    assert json.loads(op["value"][ANNOTATION_USER_INFO])["user"] == "alice"


def test_untrusted_change_of_a_workloads_identity_is_refused(world: World) -> None:
    def deployment(user: str) -> dict[str, Any]:
        info = json.dumps({"user": user, "groups": []})
        template = {"metadata": {"annotations": {ANNOTATION_USER_INFO: info}}, "spec": {"containers": []}}
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "team-a"},
            "spec": {"template": template},
        }

    request = {
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "namespace": "team-a",
        "name": "web",
        "operation": "UPDATE",
        "userInfo": MALLORY,
        "object": deployment("bob"),
        "oldObject": deployment("alice"),
    }
    response = review(world, MUTATE_WORKLOAD, request)
    assert response["allowed"] is False and response["status"]["code"] == 403
    assert "Deployment team-a/web: mallory may not change" in response["status"]["message"]


def test_quota_breaking_a_rule_is_refused_and_a_valid_one_admitted(world: World) -> None:
    refused = review(world, VALIDATE_QUOTA, quota_request("CREATE", a_quota("team-b", "20", "10")))
    assert refused["allowed"] is False
    assert refused["status"]["code"] == 400
    assert (
        refused["status"]["message"]
        == "ElasticQuota team-b/team-b refused: quota team-b: min vcore 20000m > max 10000m"
    )
    admitted = review(world, VALIDATE_QUOTA, quota_request("CREATE", a_quota("team-b", "5", "10")))
    assert admitted["allowed"] is True and "patch" not in admitted


def test_quota_with_children_cannot_be_deleted(world: World) -> None:
    org = ElasticQuotaSpec("org", "org", max=Resource({"vcore": 10000}), is_parent=True)
    team = ElasticQuotaSpec("team", "team", max=Resource({"vcore": 5000}), parent="org")
    world.quotas = QuotaTree({"org": org, "team": team}, {})
    try:
        response = review(world, VALIDATE_QUOTA, quota_request("DELETE", None, a_quota("org", "0", "10")))
    finally:
        world.quotas = QuotaTree({}, {})
    assert response["allowed"] is False
    assert "quota org: cannot be deleted while it has children (team)" in response["status"]["message"]


def test_quota_changes_are_refused_until_the_scheduler_has_loaded_the_tree(world: World) -> None:
    world.quotas = None
    try:
        response = review(world, VALIDATE_QUOTA, quota_request("CREATE", a_quota("team-c", "1", "2")))
    finally:
        world.quotas = QuotaTree({}, {})
    assert response["allowed"] is False and response["status"]["code"] == 503


def test_webhook_server_refuses_to_start_without_a_certificate(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="--webhook-cert and --webhook-key"):
        webhook_server(9443)
    with pytest.raises(ValueError, match="does not exist"):
        webhook_server(9443, cert_dir=str(tmp_path))
    (tmp_path / "tls.crt").write_text("cert")
    (tmp_path / "tls.key").write_text("key")
    server = webhook_server(9443, cert_dir=str(tmp_path))
    assert (server.certfile, server.pkeyfile) == (str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"))
