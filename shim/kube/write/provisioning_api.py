"""The API calls of gangs' ProvisioningRequests, one method per call the chart allows
(shim/kube/permissions.py): PodTemplates created and deleted, ProvisioningRequests created,
listed and deleted, a gang's pods annotated as their consumers.

`served_version` asks the API server's discovery (no permission needed) which version of
autoscaling.x-k8s.io it serves, if any: without cluster-autoscaler's CRD there is nothing to create.
Errors are raised as the client raises them (`ApiException` with `.status`, or a network error).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubernetes import client

from shim.autoscaling import GROUP, MANAGED_BY, PLURAL, VERSIONS

MERGE = "application/merge-patch+json"


class ProvisioningApi:
    def __init__(self, api_client: client.ApiClient, timeout: float = 10.0) -> None:
        self._client = api_client
        self._core = client.CoreV1Api(api_client)
        self._custom = client.CustomObjectsApi(api_client)
        self._timeout = timeout

    def served_version(self) -> str | None:
        """GET /apis/autoscaling.x-k8s.io: the version to use (v1 before v1beta1), or None when
        the group is not served (404)."""
        request = self._client.param_serialize("GET", f"/apis/{GROUP}", auth_settings=["BearerToken"])
        try:
            response = self._client.call_api(*request, _request_timeout=self._timeout)
            response.read()  # type: ignore[no-untyped-call]
        except client.ApiException as error:
            if error.status == 404:
                return None
            raise
        if response.status == 404:
            return None
        if not 200 <= response.status < 300:
            raise client.ApiException(status=response.status, reason=f"discovery of {GROUP}")
        found = json.loads(response.data or b"{}")
        if not isinstance(found, Mapping):
            return None
        served = [v.get("version") for v in found.get("versions") or [] if isinstance(v, Mapping)]
        preferred = (found.get("preferredVersion") or {}).get("version")
        if preferred in VERSIONS:
            return str(preferred)
        return next((version for version in VERSIONS if version in served), None)

    def create_template(self, namespace: str, body: Mapping[str, Any]) -> None:
        """POST podtemplates."""
        self._core.create_namespaced_pod_template(
            namespace,
            dict(body),  # type: ignore[arg-type]
            _preload_content=False,
            _request_timeout=self._timeout,
        )

    def delete_template(self, namespace: str, name: str) -> None:
        """DELETE podtemplates/{name}."""
        self._core.delete_namespaced_pod_template(
            name, namespace, _preload_content=False, _request_timeout=self._timeout
        )

    def create_request(self, version: str, namespace: str, body: Mapping[str, Any]) -> None:
        """POST provisioningrequests."""
        self._custom.create_namespaced_custom_object(
            GROUP, version, namespace, PLURAL, dict(body), _request_timeout=self._timeout
        )

    def list_requests(self, version: str) -> list[Mapping[str, Any]]:
        """GET provisioningrequests in every namespace: the ones Herder made (by its label)."""
        found = self._custom.list_cluster_custom_object(
            GROUP, version, PLURAL, label_selector=f"{MANAGED_BY}=herder", _request_timeout=self._timeout
        )
        items = found.get("items") if isinstance(found, Mapping) else None
        return [item for item in items or [] if isinstance(item, Mapping)]

    def delete_request(self, version: str, namespace: str, name: str) -> None:
        """DELETE provisioningrequests/{name}."""
        self._custom.delete_namespaced_custom_object(
            GROUP, version, namespace, PLURAL, name, _request_timeout=self._timeout
        )

    def annotate_pod(self, namespace: str, name: str, annotations: Mapping[str, str | None]) -> None:
        """PATCH pods/{name}: only the annotations given (None removes one; a merge patch)."""
        self._core.patch_namespaced_pod(
            name,
            namespace,
            {"metadata": {"annotations": dict(annotations)}},
            _content_type=MERGE,
            _preload_content=False,
            _request_timeout=self._timeout,
        )
