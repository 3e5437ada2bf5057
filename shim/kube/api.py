"""The shim's writes to the API server through the official client: pod bindings and evictions.

Only these subresources are ever written for pods; kopf itself never writes to pods or nodes.
"""

from __future__ import annotations

from kubernetes import client


class KubeWriter:
    def __init__(self, api_client: client.ApiClient, timeout: float = 10.0) -> None:
        self._core = client.CoreV1Api(api_client)
        self._timeout = timeout

    def post_binding(self, namespace: str, name: str, node: str) -> None:
        """POST pods/{name}/binding; raises ApiException (with .status) or a network error."""
        body = client.V1Binding(
            metadata=client.V1ObjectMeta(name=name, namespace=namespace),
            target=client.V1ObjectReference(api_version="v1", kind="Node", name=node),
        )
        # The server answers with a Status the client cannot read back as a V1Binding.
        self._core.create_namespaced_pod_binding(
            name, namespace, body, _preload_content=False, _request_timeout=self._timeout
        )

    def post_eviction(self, namespace: str, name: str) -> None:
        """POST pods/{name}/eviction; a PodDisruptionBudget refusal raises ApiException(429)."""
        body = client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace=namespace))
        self._core.create_namespaced_pod_eviction(
            name, namespace, body, _preload_content=False, _request_timeout=self._timeout
        )
