"""The shim's writes to the API server: pod bindings, evictions, gang placeholder pods, and
token reviews for REST.

Only these subresources are ever written for Herder's pods; the only pods Herder creates or
deletes are its gang placeholders (shim/kube/write/placeholders.py); kopf itself never writes
to pods or nodes.

Bindings are the hot path (one per placed pod), so they skip the client's model layer: the body
is a plain dict serialised once, with the client's own auth headers (tokens refreshed by its
hook), POSTed on a connection each binder thread keeps (shim/kube/write/keepalive.py: half the CPU
of urllib3). Where that transport cannot go (a proxy, say) the POST goes through the client's
urllib3 pool instead; the writer has a pool of its own, sized for the binder's workers, so no
binding waits for, or opens, a connection another call holds.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import urllib3
from kubernetes import client

from shim.kube.calls import ApiCalls, segment
from shim.kube.write.keepalive import KeptAliveConnections, usable

_BINDING_PATH = "/api/v1/namespaces/{namespace}/pods/{name}/binding"


class KubeWriter:
    def __init__(self, api_client: client.ApiClient, timeout: float = 10.0, pool_size: int = 16) -> None:
        config = copy.copy(api_client.configuration)
        config.connection_pool_maxsize = max(pool_size, config.connection_pool_maxsize or 0)
        self._api = client.ApiClient(config)
        self._api.user_agent = api_client.user_agent
        self._calls = ApiCalls(self._api, timeout)
        self._timeout = timeout
        self._request_timeout = urllib3.Timeout(total=timeout)
        self._kept_alive = KeptAliveConnections(config, timeout) if usable(config) else None

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
        encoded = json.dumps(body).encode()
        if self._kept_alive is not None:
            status, reason, data = self._kept_alive.post(path, encoded, headers)
        else:
            response = self._api.rest_client.pool_manager.request(
                "POST",
                self._api.configuration.host + path,
                body=encoded,
                headers=headers,
                timeout=self._request_timeout,
                preload_content=True,
            )
            status, reason, data = response.status, response.reason or "", response.data
        if not 200 <= status <= 299:
            raise client.ApiException(status=status, reason=reason, body=data.decode("utf-8", "replace"))

    def post_eviction(self, namespace: str, name: str) -> None:
        """POST pods/{name}/eviction; a PodDisruptionBudget refusal raises ApiException(429)."""
        body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
        self._calls.request("POST", f"/api/v1/namespaces/{segment(namespace)}/pods/{segment(name)}/eviction", body)

    def create_pod(self, namespace: str, body: dict[str, Any]) -> None:
        """POST a pod (a gang placeholder); raises ApiException (409: it exists already)."""
        self._calls.request("POST", f"/api/v1/namespaces/{segment(namespace)}/pods", body)

    def delete_pod(self, namespace: str, name: str) -> None:
        """DELETE a pod at once (grace period 0: a placeholder runs nothing to stop)."""
        self._calls.request(
            "DELETE", f"/api/v1/namespaces/{segment(namespace)}/pods/{segment(name)}", query={"gracePeriodSeconds": "0"}
        )


def token_reviewer(api_client: client.ApiClient, timeout: float = 5.0) -> Callable[[str], bool]:
    """A blocking check of a bearer token by TokenReview: True when the API server authenticates it."""
    authentication = client.AuthenticationV1Api(api_client)

    def review(token: str) -> bool:
        body = client.V1TokenReview(spec=client.V1TokenReviewSpec(token=token))
        answer: Any = authentication.create_token_review(body, _request_timeout=timeout)
        return bool(answer.status and answer.status.authenticated)

    return review
