"""The API calls of gangs' ProvisioningRequests, one method per call the chart allows
(shim/kube/permissions.py): PodTemplates created and deleted, ProvisioningRequests created,
listed and deleted, a gang's pods annotated as their consumers.

`served_version` asks the API server's discovery (no permission needed) which version of
autoscaling.x-k8s.io it serves, if any: without cluster-autoscaler's CRD there is nothing to create.
Errors are raised as the client raises them (`ApiException` with `.status`, or a network error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubernetes import client

from shim.autoscaling import GROUP, MANAGED_BY, PLURAL, VERSIONS
from shim.kube.calls import MERGE, ApiCalls, segment


class ProvisioningApi:
    def __init__(self, api_client: client.ApiClient, timeout: float = 10.0) -> None:
        self._calls = ApiCalls(api_client, timeout)

    def served_version(self) -> str | None:
        """GET /apis/autoscaling.x-k8s.io: the version to use (v1 before v1beta1), or None when
        the group is not served (404)."""
        try:
            found = self._calls.get(f"/apis/{GROUP}")
        except client.ApiException as error:
            if error.status == 404:
                return None
            raise
        if not isinstance(found, Mapping):
            return None
        served = [v.get("version") for v in found.get("versions") or [] if isinstance(v, Mapping)]
        preferred = (found.get("preferredVersion") or {}).get("version")
        if preferred in VERSIONS:
            return str(preferred)
        return next((version for version in VERSIONS if version in served), None)

    def create_template(self, namespace: str, body: Mapping[str, Any]) -> None:
        """POST podtemplates."""
        self._calls.request("POST", f"/api/v1/namespaces/{segment(namespace)}/podtemplates", body)

    def delete_template(self, namespace: str, name: str) -> None:
        """DELETE podtemplates/{name}."""
        self._calls.request("DELETE", f"/api/v1/namespaces/{segment(namespace)}/podtemplates/{segment(name)}")

    def create_request(self, version: str, namespace: str, body: Mapping[str, Any]) -> None:
        """POST provisioningrequests."""
        self._calls.request("POST", _requests(version, namespace), body)

    def list_requests(self, version: str) -> list[Mapping[str, Any]]:
        """GET provisioningrequests in every namespace: the ones Herder made (by its label)."""
        found = self._calls.get(f"/apis/{GROUP}/{segment(version)}/{PLURAL}", {"labelSelector": f"{MANAGED_BY}=herder"})
        items = found.get("items") if isinstance(found, Mapping) else None
        return [item for item in items or [] if isinstance(item, Mapping)]

    def delete_request(self, version: str, namespace: str, name: str) -> None:
        """DELETE provisioningrequests/{name}."""
        self._calls.request("DELETE", f"{_requests(version, namespace)}/{segment(name)}")

    def annotate_pod(self, namespace: str, name: str, annotations: Mapping[str, str | None]) -> None:
        """PATCH pods/{name}: only the annotations given (None removes one; a merge patch)."""
        self._calls.request(
            "PATCH",
            f"/api/v1/namespaces/{segment(namespace)}/pods/{segment(name)}",
            {"metadata": {"annotations": dict(annotations)}},
            MERGE,
        )


def _requests(version: str, namespace: str) -> str:
    return f"/apis/{GROUP}/{segment(version)}/namespaces/{segment(namespace)}/{PLURAL}"
