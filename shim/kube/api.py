"""The shim's writes to the API server: pod bindings and evictions.

Only these subresources are ever written for pods; kopf itself never writes to pods or nodes.

Bindings are the hot path (one per placed pod), so they skip the client's model layer: the body
is a plain dict serialised once, POSTed through the client's own urllib3 pool (same host, TLS
and credentials, tokens refreshed by the client's auth hook), and the answer is read whole so
the kept-alive connection goes back to the pool. The writer has a pool of its own, sized for the
binder's workers, so no binding waits for, or opens, a connection another call holds.
"""

from __future__ import annotations

import copy
import json
from typing import Any
from urllib.parse import quote

import urllib3
from kubernetes import client

_BINDING_PATH = "/api/v1/namespaces/{namespace}/pods/{name}/binding"


class KubeWriter:
    def __init__(self, api_client: client.ApiClient, timeout: float = 10.0, pool_size: int = 16) -> None:
        config = copy.copy(api_client.configuration)
        config.connection_pool_maxsize = max(pool_size, config.connection_pool_maxsize or 0)
        self._api = client.ApiClient(config)
        self._api.user_agent = api_client.user_agent
        self._core = client.CoreV1Api(self._api)
        self._timeout = timeout
        self._request_timeout = urllib3.Timeout(total=timeout)

    def post_binding(self, namespace: str, name: str, node: str, uid: str | None = None) -> None:
        """POST pods/{name}/binding; raises ApiException (with .status) or a network error.

        With `uid`, the API server refuses (409) to bind a pod of that name with another uid: a
        pod deleted and recreated under the same name never receives the old one's binding.
        """
        metadata: dict[str, str] = {"name": name, "namespace": namespace}
        if uid:
            metadata["uid"] = uid
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": metadata,
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        path = _BINDING_PATH.format(namespace=quote(namespace, safe=""), name=quote(name, safe=""))
        headers = {
            **self._api.default_headers,
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self._api.update_params_for_auth(headers, None, ["BearerToken"], path, "POST", body)
        response = self._api.rest_client.pool_manager.request(
            "POST",
            self._api.configuration.host + path,
            body=json.dumps(body).encode(),
            headers=headers,
            timeout=self._request_timeout,
            preload_content=True,
        )
        if not 200 <= response.status <= 299:
            raise client.ApiException(
                status=response.status, reason=response.reason, body=response.data.decode("utf-8", "replace")
            )

    def post_eviction(self, namespace: str, name: str) -> None:
        """POST pods/{name}/eviction; a PodDisruptionBudget refusal raises ApiException(429)."""
        body = client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace=namespace))
        response: Any = self._core.create_namespaced_pod_eviction(
            name, namespace, body, _preload_content=False, _request_timeout=self._timeout
        )
        response.read()  # whole, so the connection can serve the next call
        response.release_conn()
