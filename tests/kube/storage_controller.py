"""What a kind cluster runs for volumes, for the emulated one: the PersistentVolume controller and
a provisioner like kind's default one (rancher.io/local-path, class `standard`, WaitForFirstConsumer).

- PersistentVolume controller: a volume whose claimRef names an unbound claim binds it (the
  claim's `volumeName`, both phases `Bound`); this is how a static volume the scheduler chose
  for a claim reaches it.
- provisioner: a claim of a class it serves, annotated with `volume.kubernetes.io/selected-node`
  by the scheduler (or at once for an `Immediate` class), gets a volume on that node (a
  `nodeAffinity` on its hostname, like local-path's) made for it.

It polls, with its own identity, through the API like the real controllers.
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client

from tests.kube.polling import PollingController

PROVISIONER = "rancher.io/local-path"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
DEFAULT_CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
    "provisioner": PROVISIONER,
    "volumeBindingMode": "WaitForFirstConsumer",
    "reclaimPolicy": "Delete",
}


def _items(response: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(response.data)["items"]
    return items


class StorageController(PollingController):
    name = "storage-controller"

    def __init__(self, api: client.ApiClient, interval: float = 0.2) -> None:
        super().__init__(interval)
        self._core = client.CoreV1Api(api)
        self._storage = client.StorageV1Api(api)

    def reconcile(self) -> None:
        classes = {c["metadata"]["name"]: c for c in _items(self._storage.list_storage_class(_preload_content=False))}
        volumes = _items(self._core.list_persistent_volume(_preload_content=False))
        claims = _items(self._core.list_persistent_volume_claim_for_all_namespaces(_preload_content=False))
        for claim in claims:
            if (claim.get("spec") or {}).get("volumeName"):
                continue
            volume = self._volume_for(claim, volumes) or self._provision(claim, classes)
            if volume is not None:
                self._bind(claim, volume)

    @staticmethod
    def _volume_for(claim: dict[str, Any], volumes: list[dict[str, Any]]) -> str | None:
        meta = claim["metadata"]
        for volume in volumes:
            ref = (volume.get("spec") or {}).get("claimRef") or {}
            if ref.get("name") == meta["name"] and ref.get("namespace") == meta["namespace"]:
                return str(volume["metadata"]["name"])
        return None

    def _provision(self, claim: dict[str, Any], classes: dict[str, dict[str, Any]]) -> str | None:
        meta, spec = claim["metadata"], claim.get("spec") or {}
        class_name = spec.get("storageClassName")
        if class_name is None:
            class_name = next((n for n, c in classes.items() if _is_default(c)), None)
        storage_class = classes.get(class_name or "")
        if storage_class is None or storage_class.get("provisioner") != PROVISIONER:
            return None
        node = (meta.get("annotations") or {}).get(SELECTED_NODE)
        if storage_class.get("volumeBindingMode") == "WaitForFirstConsumer" and not node:
            return None
        name = f"pvc-{meta['namespace']}-{meta['name']}"
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "storageClassName": class_name,
                "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")},
                "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                "hostPath": {"path": f"/var/local-path-provisioner/{name}"},
                "claimRef": {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "namespace": meta["namespace"],
                    "name": meta["name"],
                },
            },
        }
        if node:
            term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}
            body["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [term]}}
        self._core.create_persistent_volume(body)
        return name

    def _bind(self, claim: dict[str, Any], volume: str) -> None:
        meta = claim["metadata"]
        self._core.patch_namespaced_persistent_volume_claim(
            meta["name"], meta["namespace"], {"spec": {"volumeName": volume}}
        )
        bound = {"status": {"phase": "Bound"}}
        self._core.patch_namespaced_persistent_volume_claim_status(meta["name"], meta["namespace"], bound)
        self._core.patch_persistent_volume_status(volume, bound)


def _is_default(storage_class: dict[str, Any]) -> bool:
    annotations = storage_class["metadata"].get("annotations") or {}
    return str(annotations.get("storageclass.kubernetes.io/is-default-class", "")).lower() == "true"
