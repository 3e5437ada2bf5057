"""Answering an AdmissionReview without kopf's engine, for routes whose objects the operator does
not watch.

kopf remembers every object an UPDATE or DELETE review names (its per-object memo) until a watch
reports the object deleted. Pods and ElasticQuotas are watched, so that memory is freed; the
workloads the pod-template webhook reviews are not, and each one ever updated would stay in
memory (about 1 KiB each, measured). `DirectWebhookServer` is kopf's own `WebhookServer` (same
TLS, certificate reloading and `/<id>` routing) that answers the routes given to it directly
from a decision function and hands every other route to kopf.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import kopf

from shim.kube.admission.decisions import Decision

DirectRoute = Callable[[Mapping[str, Any]], Decision]
"""A decision over an AdmissionReview's `request` part."""


def _pointer(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def json_patch(obj: Any, merge: Mapping[str, Any], path: str = "") -> list[dict[str, Any]]:
    """The JSONPatch operations applying the merge patch `merge` to `obj`."""
    ops: list[dict[str, Any]] = []
    for key, value in merge.items():
        pointer = f"{path}/{_pointer(key)}"
        present = isinstance(obj, Mapping) and key in obj
        current = obj[key] if present else None
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            ops += json_patch(current, value, pointer)
        elif value is None:
            if present:
                ops.append({"op": "remove", "path": pointer})
        else:
            ops.append({"op": "replace" if present else "add", "path": pointer, "value": value})
    return ops


def admission_response(review: Mapping[str, Any], decision: Decision) -> dict[str, Any]:
    """The AdmissionReview answer the API server expects for `decision`."""
    request = review.get("request") or {}
    response: dict[str, Any] = {"uid": request.get("uid", ""), "allowed": decision.allowed}
    if not decision.allowed:
        response["status"] = {"code": decision.code, "message": decision.message}
    elif decision.patch:
        ops = json_patch(request.get("object") or {}, decision.patch)
        response["patch"] = base64.b64encode(json.dumps(ops).encode()).decode("ascii")
        response["patchType"] = "JSONPatch"
    return {
        "apiVersion": review.get("apiVersion", "admission.k8s.io/v1"),
        "kind": "AdmissionReview",
        "response": response,
    }


class DirectWebhookServer(kopf.WebhookServer):
    def __init__(
        self, *, direct: Mapping[str, DirectRoute], on_serving: Callable[[], None] | None = None, **options: Any
    ) -> None:
        super().__init__(**options)
        self.direct = dict(direct)
        self.on_serving = on_serving  # called once the server listens (kopf yields its config then)

    async def __call__(self, fn: Any) -> AsyncIterator[Any]:
        async def routed(
            request: Any,
            *,
            webhook: str | None = None,
            headers: dict[str, str] | None = None,
            sslpeer: dict[str, Any] | None = None,
        ) -> Any:
            """`request` is the whole AdmissionReview (kopf's name for it)."""
            decide = self.direct.get(webhook or "")
            if decide is None:
                return await fn(request, webhook=webhook, headers=headers, sslpeer=sslpeer)
            try:
                decision = decide(request.get("request") or {})
            except Exception as error:  # refuse, as kopf does, rather than answer nothing
                decision = Decision.deny(f"Herder's webhook failed: {error!r}", 500)
            return admission_response(request, decision)

        async for client_config in super().__call__(routed):
            if self.on_serving is not None:
                self.on_serving()
            yield client_config
