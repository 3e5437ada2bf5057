"""The part of kube-controller-manager the e2e suite needs on the emulator: workloads make pods.

A real cluster's Deployment controller makes a ReplicaSet and the ReplicaSet controller makes the
pods; the emulated cluster has neither, so this keeps `spec.replicas` pods of each Deployment's
template, named and labelled as the ReplicaSet controller names them (`<deployment>-<hash>-<suffix>`,
`pod-template-hash`), created through the API with the controller's own identity (so admission
webhooks see them as on a cluster). Scaling down removes pods that are not yet bound first, as the
ReplicaSet controller does. StatefulSets (`podManagementPolicy: Parallel`) get pods
`<set>-<ordinal>` and, from `volumeClaimTemplates`, claims `<template>-<set>-<ordinal>`, as the
StatefulSet controller makes them. It polls: the suite waits in seconds, not milliseconds.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from typing import Any

from kubernetes import client

from tests.kube.polling import PollingController

CONTROLLER_TOKEN = "replicaset-controller-token"
CONTROLLER_USER = {
    "username": "system:serviceaccount:kube-system:replicaset-controller",
    "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
}


def template_hash(template: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()[:10]


class DeploymentController(PollingController):
    """Keeps every Deployment's pods at its replica count until stopped."""

    name = "deployment-controller"

    def __init__(self, api: client.ApiClient, interval: float = 0.2) -> None:
        super().__init__(interval)
        self._apps = client.AppsV1Api(api)
        self._core = client.CoreV1Api(api)
        self._serial = itertools.count()

    def reconcile(self) -> None:
        deployments = self._apps.list_deployment_for_all_namespaces(_preload_content=False)
        for deployment in json.loads(deployments.data)["items"]:
            self._keep_replicas(deployment)
        sets = self._apps.list_stateful_set_for_all_namespaces(_preload_content=False)
        for stateful_set in json.loads(sets.data)["items"]:
            self._keep_ordinals(stateful_set)

    def _keep_ordinals(self, stateful_set: dict[str, Any]) -> None:
        meta, spec = stateful_set["metadata"], stateful_set["spec"]
        namespace, name = meta["namespace"], meta["name"]
        claims = {
            item["metadata"]["name"]
            for item in json.loads(
                self._core.list_namespaced_persistent_volume_claim(namespace, _preload_content=False).data
            )["items"]
        }
        pods = {pod["metadata"]["name"] for pod in self._pods(namespace)}
        templates = spec.get("volumeClaimTemplates") or []
        for ordinal in range(int(spec.get("replicas", 1))):
            pod_name = f"{name}-{ordinal}"
            volumes = []
            for template in templates:
                claim = f"{template['metadata']['name']}-{pod_name}"
                volumes.append({"name": template["metadata"]["name"], "persistentVolumeClaim": {"claimName": claim}})
                if claim not in claims:
                    body = {
                        "metadata": {
                            "name": claim,
                            "namespace": namespace,
                            "labels": dict(spec["selector"].get("matchLabels") or {}),
                        },
                        "spec": copy.deepcopy(template["spec"]),
                    }
                    self._core.create_namespaced_persistent_volume_claim(namespace, body)
            if pod_name not in pods:
                template = spec["template"]
                pod_meta = copy.deepcopy(template.get("metadata") or {})
                pod_meta["name"] = pod_name
                pod_meta["labels"] = {**(pod_meta.get("labels") or {}), "statefulset.kubernetes.io/pod-name": pod_name}
                owner = {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": name,
                    "uid": meta.get("uid", name),
                    "controller": True,
                }
                pod_meta["ownerReferences"] = [owner]
                pod_spec = copy.deepcopy(template["spec"])
                pod_spec["volumes"] = [*(pod_spec.get("volumes") or []), *volumes]
                self._core.create_namespaced_pod(
                    namespace, {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec}
                )

    def _keep_replicas(self, deployment: dict[str, Any]) -> None:
        meta, spec = deployment["metadata"], deployment["spec"]
        namespace, name = meta["namespace"], meta["name"]
        template = spec["template"]
        hash_ = template_hash(template)
        owned = [pod for pod in self._pods(namespace) if _owner_uid(pod) == meta.get("uid", name)]
        wanted = int(spec.get("replicas", 1))
        for _ in range(wanted - len(owned)):
            self._core.create_namespaced_pod(namespace, self._pod(deployment, template, hash_))
        # Unbound pods go first, newest first, as the ReplicaSet controller picks them.
        surplus = sorted(owned, key=_created, reverse=True)
        surplus.sort(key=lambda pod: bool(pod["spec"].get("nodeName")))
        for pod in surplus[: max(0, len(owned) - wanted)]:
            self._core.delete_namespaced_pod(pod["metadata"]["name"], namespace, grace_period_seconds=0)

    def _pods(self, namespace: str) -> list[dict[str, Any]]:
        response = self._core.list_namespaced_pod(namespace, _preload_content=False)
        items: list[dict[str, Any]] = json.loads(response.data)["items"]
        return [pod for pod in items if not pod["metadata"].get("deletionTimestamp")]

    def _pod(self, deployment: dict[str, Any], template: dict[str, Any], hash_: str) -> dict[str, Any]:
        meta = deployment["metadata"]
        pod_meta = copy.deepcopy(template.get("metadata") or {})
        pod_meta["labels"] = {**(pod_meta.get("labels") or {}), "pod-template-hash": hash_}
        pod_meta["name"] = f"{meta['name']}-{hash_}-{next(self._serial):05x}"
        pod_meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": meta["name"],
                "uid": meta.get("uid", meta["name"]),
                "controller": True,
            }
        ]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": copy.deepcopy(template["spec"])}


def _owner_uid(pod: dict[str, Any]) -> str | None:
    for owner in pod["metadata"].get("ownerReferences") or []:
        if owner.get("controller") and owner.get("kind") == "Deployment":
            return str(owner.get("uid"))
    return None


def _created(pod: dict[str, Any]) -> str:
    return str(pod["metadata"].get("creationTimestamp") or "")
