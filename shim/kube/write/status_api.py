"""The status writers' API calls through the official client, one method per call the chart allows.

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

from shim.kube.kinds import QUOTA_GROUP, QUOTA_PLURAL, QUOTA_VERSION

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


class StatusApi:
    def __init__(self, api_client: client.ApiClient, timeout: float = 10.0) -> None:
        self._core = client.CoreV1Api(api_client)
        self._custom = client.CustomObjectsApi(api_client)
        self._timeout = timeout

    def read_quota(self, namespace: str, name: str) -> Mapping[str, Any]:
        """GET elasticquotas/{name} (what an earlier leader already wrote)."""
        found = self._custom.get_namespaced_custom_object(
            QUOTA_GROUP, QUOTA_VERSION, namespace, QUOTA_PLURAL, name, _request_timeout=self._timeout
        )
        return found if isinstance(found, Mapping) else {}

    def patch_quota_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        """PATCH elasticquotas/{name}/status (merge patch)."""
        self._custom.patch_namespaced_custom_object_status(
            QUOTA_GROUP,
            QUOTA_VERSION,
            namespace,
            QUOTA_PLURAL,
            name,
            dict(patch),
            _content_type=MERGE,
            _request_timeout=self._timeout,
        )

    def patch_quota(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        """PATCH elasticquotas/{name} (merge patch; Herder only writes its annotations)."""
        self._custom.patch_namespaced_custom_object(
            QUOTA_GROUP,
            QUOTA_VERSION,
            namespace,
            QUOTA_PLURAL,
            name,
            dict(patch),
            _content_type=MERGE,
            _request_timeout=self._timeout,
        )

    def patch_group_status(
        self, group: str, version: str, plural: str, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> None:
        """PATCH {plural}/{name}/status of a PodGroup API (merge patch: custom resources have no
        strategic merge, and Kubernetes' PodGroup conditions are written whole)."""
        self._custom.patch_namespaced_custom_object_status(
            group,
            version,
            namespace,
            plural,
            name,
            dict(patch),
            _content_type=MERGE,
            _request_timeout=self._timeout,
        )

    def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        """PATCH pods/{name}/status (strategic merge; a metadata.resourceVersion is a precondition)."""
        self._core.patch_namespaced_pod_status(
            name,
            namespace,
            dict(patch),
            _content_type=STRATEGIC,
            _preload_content=False,
            _request_timeout=self._timeout,
        )

    def create_event(self, namespace: str, event: Mapping[str, Any]) -> None:
        """POST events (core/v1)."""
        self._core.create_namespaced_event(
            namespace,
            dict(event),  # type: ignore[arg-type]
            _preload_content=False,
            _request_timeout=self._timeout,
        )

    def patch_event(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        """PATCH events/{name} (core/v1; a repeat bumps count and lastTimestamp)."""
        self._core.patch_namespaced_event(
            name,
            namespace,
            dict(patch),
            _content_type=STRATEGIC,
            _preload_content=False,
            _request_timeout=self._timeout,
        )
