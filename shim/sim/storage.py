"""The simulated cluster's storage: StorageClasses, PersistentVolumes and claims, and the
controllers a real cluster runs for them.

It tells the core every object (as the operator's storage watches do) and plays the parts of
the cluster that are not the scheduler: the PersistentVolume controller (a volume whose
claimRef names a claim binds it; an unbound claim of an `Immediate` class binds to the smallest
matching available volume), a dynamic provisioner for every class with a `provisioner` (for
`WaitForFirstConsumer` classes on the node the scheduler selected, in that node's zone; for
`Immediate` ones at once) and the ephemeral-volume controller (a pod's generic ephemeral volume
gets its claim `<pod>-<volume>`). Each step is noted in the report's events.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from core.objects.volumes import NO_PROVISIONER, SELECTED_NODE, ZONE_LABELS, VolumePlan
from core.scheduler import Scheduler
from shim.convert.objects import ConversionError, list_at, map_at, meta_of
from shim.convert.storage import claim_from, claim_key, storage_class_from, volume_from

HOSTNAME = "kubernetes.io/hostname"
STORAGE_KINDS = ("StorageClass", "PersistentVolume", "PersistentVolumeClaim")
Note = Callable[[float, str, str, str], None]


class SimStorage:
    def __init__(self, scheduler: Scheduler, note: Note) -> None:
        self._scheduler = scheduler
        self._note = note
        self.classes: dict[str, dict[str, Any]] = {}
        self.volumes: dict[str, dict[str, Any]] = {}
        self.claims: dict[str, dict[str, Any]] = {}  # "<namespace>/<name>"
        self._provisioned = 0

    # -- objects -------------------------------------------------------------------------
    def apply(self, manifest: Mapping[str, Any], now: float) -> None:
        obj = copy.deepcopy(dict(manifest))
        # The controllers write into these parts: a null one is an empty one (the scenario's
        # reading refused any of the wrong type, as the API server would).
        for part in ("spec", "status", "metadata"):
            if obj.get(part) is None:
                obj[part] = {}
        for part in ("labels", "annotations"):
            if obj["metadata"].get(part) is None:
                obj["metadata"][part] = {}
        kind = obj.get("kind")
        try:
            if kind == "StorageClass":
                self._scheduler.update_storage_class(storage_class_from(obj))
                self.classes[_name(obj)] = obj
            elif kind == "PersistentVolume":
                self._scheduler.update_volume(volume_from(obj))
                self.volumes[_name(obj)] = obj
            else:
                meta = obj.setdefault("metadata", {})
                meta.setdefault("namespace", "default")
                self.claims[_key(obj)] = obj
                self._scheduler.update_claim(claim_from(obj))
        except ConversionError as err:
            self._note(now, f"{kind} {_name(obj)}", "ObjectRefused", str(err))
            return
        self._settle(now)

    def delete(self, kind: str, namespace: str | None, name: str, now: float) -> bool:
        if kind == "StorageClass" and self.classes.pop(name, None) is not None:
            self._scheduler.remove_storage_class(name)
        elif kind == "PersistentVolume" and self.volumes.pop(name, None) is not None:
            self._scheduler.remove_volume(name)
        elif kind == "PersistentVolumeClaim" and claim_key(namespace or "default", name) in self.claims:
            del self.claims[claim_key(namespace or "default", name)]
            self._scheduler.remove_claim(claim_key(namespace or "default", name))
        else:
            return False
        return True

    def pod_created(self, pod: Mapping[str, Any], now: float) -> None:
        """The ephemeral-volume controller: a claim per generic ephemeral volume of the pod."""
        meta = meta_of(pod)
        namespace, pod_name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        for volume in list_at(pod, "spec", "volumes"):
            template = map_at(volume, "ephemeral", "volumeClaimTemplate") if isinstance(volume, Mapping) else {}
            name = f"{pod_name}-{volume.get('name', '')}" if template else ""
            if name and claim_key(namespace, name) not in self.claims:
                metadata = {**dict(template.get("metadata") or {}), "name": name, "namespace": namespace}
                spec = copy.deepcopy(dict(template.get("spec") or {}))
                self.apply({"kind": "PersistentVolumeClaim", "metadata": metadata, "spec": spec}, now)

    # -- what a placement writes --------------------------------------------------------------
    def carry_out(self, plan: VolumePlan, node: Mapping[str, Any], now: float) -> str | None:
        """Write the plan as the operator does, then let the controllers act; the problem that
        keeps a claim unbound, if any (the pod is then not bound)."""
        for key, volume_name in plan.bind:
            volume = self.volumes.get(volume_name)
            if volume is None:
                return f"persistentvolume {volume_name} for claim {key} is gone"
            namespace, name = key.split("/", 1)
            volume["spec"]["claimRef"] = {"namespace": namespace, "name": name}
            self._scheduler.update_volume(volume_from(volume))
        for key in plan.provision:
            claim = self.claims.get(key)
            if claim is None:
                return f"claim {key} is gone"
            claim["metadata"].setdefault("annotations", {})[SELECTED_NODE] = _name(node)
            self._scheduler.update_claim(claim_from(claim))
        self._settle(now, node)
        for key in (key for key, _ in plan.bind):
            if not self.claims.get(key, {}).get("spec", {}).get("volumeName"):
                return f"claim {key} did not bind"
        for key in plan.provision:
            if not self.claims.get(key, {}).get("spec", {}).get("volumeName"):
                return f"claim {key} was not provisioned"
        return None

    # -- the controllers ---------------------------------------------------------------------
    def _settle(self, now: float, node: Mapping[str, Any] | None = None) -> None:
        for key, claim in sorted(self.claims.items()):
            spec = claim.setdefault("spec", {})
            if spec.get("volumeName"):
                continue
            volume = self._claimed_by(key) or self._immediate_match(claim)
            if volume is None:
                volume = self._provision(key, claim, node, now)
            if volume is not None:
                self._bind(key, claim, volume, now)

    def _claimed_by(self, key: str) -> dict[str, Any] | None:
        namespace, name = key.split("/", 1)
        for volume in self.volumes.values():
            ref = volume.get("spec", {}).get("claimRef") or {}
            if ref.get("name") == name and (ref.get("namespace") or "default") == namespace:
                return volume
        return None

    def _class_of(self, claim: Mapping[str, Any]) -> dict[str, Any] | None:
        name = claim.get("spec", {}).get("storageClassName")
        if name is None:
            return next((c for _, c in sorted(self.classes.items()) if storage_class_from(c).default), None)
        return self.classes.get(str(name))

    def _immediate_match(self, claim: Mapping[str, Any]) -> dict[str, Any] | None:
        storage_class = self._class_of(claim)
        if storage_class is not None and storage_class_from(storage_class).wait_for_first_consumer:
            return None
        wanted = claim_from(claim)
        class_name = storage_class_from(storage_class).name if storage_class is not None else ""
        best = None
        for volume in self.volumes.values():
            found = volume_from(volume)
            if (
                found.storage_class == class_name
                and not found.claim
                and not found.released
                and found.capacity >= wanted.request
                and wanted.access_modes <= found.access_modes
                and (best is None or (found.capacity, found.name) < (best[0].capacity, best[0].name))
            ):
                best = (found, volume)
        return best[1] if best is not None else None

    def _provision(
        self, key: str, claim: dict[str, Any], node: Mapping[str, Any] | None, now: float
    ) -> dict[str, Any] | None:
        raw_class = self._class_of(claim)
        if raw_class is None:
            return None
        storage_class = storage_class_from(raw_class)
        if not storage_class.provisioner or storage_class.provisioner == NO_PROVISIONER:
            return None
        selected = str(claim.get("metadata", {}).get("annotations", {}).get(SELECTED_NODE) or "")
        if storage_class.wait_for_first_consumer and (not selected or node is None or _name(node) != selected):
            return None
        self._provisioned += 1
        volume: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"pvc-{self._provisioned:05d}", "labels": {}},
            "spec": {
                "storageClassName": storage_class.name,
                "capacity": {"storage": map_at(claim, "spec", "resources", "requests").get("storage", "0")},
                "accessModes": list(claim.get("spec", {}).get("accessModes") or ["ReadWriteOnce"]),
            },
        }
        if node is not None and selected:
            labels = map_at(node, "metadata", "labels")
            zone = {k: str(labels[k]) for k in ZONE_LABELS if k in labels}
            volume["metadata"]["labels"].update(zone)
            key_values = zone or {HOSTNAME: str(labels.get(HOSTNAME, selected))}
            expressions = [{"key": k, "operator": "In", "values": [v]} for k, v in key_values.items()]
            volume["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}}
        self.volumes[_name(volume)] = volume
        self._note(now, key, "Provisioned", f"{storage_class.provisioner} made volume {_name(volume)}")
        return volume

    def _bind(self, key: str, claim: dict[str, Any], volume: dict[str, Any], now: float) -> None:
        namespace, name = key.split("/", 1)
        volume["spec"]["claimRef"] = {"namespace": namespace, "name": name}
        volume.setdefault("status", {})["phase"] = "Bound"
        claim["spec"]["volumeName"] = _name(volume)
        claim.setdefault("status", {})["phase"] = "Bound"
        self._scheduler.update_volume(volume_from(volume))
        self._scheduler.update_claim(claim_from(claim))
        self._note(now, key, "ClaimBound", f"bound to volume {_name(volume)}")


def _name(obj: Mapping[str, Any]) -> str:
    return str(meta_of(obj).get("name") or "")


def _key(obj: Mapping[str, Any]) -> str:
    meta = meta_of(obj)
    return claim_key(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
