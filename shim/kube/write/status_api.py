"""The status writers' API calls, one method per call the chart allows (by path: shim/kube/calls.py).

Every write is a patch with an explicit content type: the client's default for pods would be a
JSON patch, which a dict body is not. ElasticQuotas take JSON merge patches (custom resources
have no strategic merge); pods/status and Events take strategic merge patches, so a pod's
PodScheduled condition replaces only that condition (conditions merge by `type`).
Errors are raised as the client raises them (`ApiException` with `.status`, or a network error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubernetes import client

from shim.kube.calls import MERGE, STRATEGIC, ApiCalls, segment
from shim.kube.kinds import QUOTA_GROUP, QUOTA_PLURAL, QUOTA_VERSION

__all__ = ["MERGE", "STRATEGIC", "StatusApi"]


def _quota(namespace: str, name: str) -> str:
    return f"/apis/{QUOTA_GROUP}/{QUOTA_VERSION}/namespaces/{segment(namespace)}/{QUOTA_PLURAL}/{segment(name)}"


class StatusApi:
    def __init__(self, api_client: client.ApiClient, timeout: float = 10.0) -> None:
        self._calls = ApiCalls(api_client, timeout)

    def read_quota(self, namespace: str, name: str) -> Mapping[str, Any]:
        """GET elasticquotas/{name} (what an earlier leader already wrote)."""
        found = self._calls.get(_quota(namespace, name))
        return found if isinstance(found, Mapping) else {}

    def patch_quota_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        """PATCH elasticquotas/{name}/status (merge patch)."""
        self._calls.request("PATCH", _quota(namespace, name) + "/status", patch, MERGE)

    def patch_quota(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        """PATCH elasticquotas/{name} (merge patch; Herder only writes its annotations)."""
        self._calls.request("PATCH", _quota(namespace, name), patch, MERGE)

    def patch_group_status(
        self, group: str, version: str, plural: str, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> None:
        """PATCH {plural}/{name}/status of a PodGroup API (merge patch: custom resources have no
        strategic merge, and Kubernetes' PodGroup conditions are written whole)."""
        path = f"/apis/{segment(group)}/{segment(version)}/namespaces/{segment(namespace)}/{segment(plural)}"
        self._calls.request("PATCH", f"{path}/{segment(name)}/status", patch, MERGE)

    def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        """PATCH pods/{name}/status (strategic merge; a metadata.resourceVersion is a precondition)."""
        self._calls.request(
            "PATCH", f"/api/v1/namespaces/{segment(namespace)}/pods/{segment(name)}/status", patch, STRATEGIC
        )

    def create_event(self, namespace: str, event: Mapping[str, Any]) -> None:
        """POST events (core/v1)."""
        self._calls.request("POST", f"/api/v1/namespaces/{segment(namespace)}/events", event)

    def patch_event(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        """PATCH events/{name} (core/v1; a repeat bumps count and lastTimestamp)."""
        self._calls.request(
            "PATCH", f"/api/v1/namespaces/{segment(namespace)}/events/{segment(name)}", patch, STRATEGIC
        )
