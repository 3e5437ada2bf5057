"""Admission for the emulated API server: Herder's webhooks called the way the API server calls them.

The emulator's `webhooks` list plays the Validating/MutatingWebhookConfigurations: each route
names a path on `webhook_url` (a Service in front of the replicas), a resource and operations.
Mutating webhooks run first; a refusal answers the client with the webhook's code and
message; an unreachable webhook fails the request (failurePolicy: Fail).
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiohttp
import aiohttp.web
import jsonpatch  # kmock's own dependency
from kmock._internal import rendering
from kmock._internal.dicts import merge_patch_dict

if TYPE_CHECKING:
    from tests.kube.emulator_api import HerderEmulator


@dataclass(frozen=True, slots=True)
class WebhookRoute:
    """One entry of a Validating/MutatingWebhookConfiguration: which requests go to which path."""

    path: str
    resource: Any
    kind: str
    operations: tuple[str, ...]
    mutating: bool


def status_body(code: int, reason: str, message: str) -> dict[str, Any]:
    """A metav1.Status, as the API server answers errors (and sends them in watch ERROR events)."""
    return {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Success" if code < 400 else "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }


def status(code: int, reason: str, message: str) -> aiohttp.web.Response:
    return aiohttp.web.json_response(status_body(code, reason, message), status=code)


def _user_info(emulator: HerderEmulator, headers: Mapping[str, str]) -> dict[str, Any]:
    auth = headers.get("Authorization") or headers.get("authorization") or ""
    token = auth.split(" ", 1)[1] if " " in auth else ""
    return emulator.users.get(token, {"username": "system:anonymous", "groups": ["system:unauthenticated"]})


def _routes(emulator: HerderEmulator, request: rendering.Request, operation: str) -> list[WebhookRoute]:
    if emulator.webhook_url is None or request.subresource is not None:
        return []
    matching = [r for r in emulator.webhooks if r.resource == request.resource and operation in r.operations]
    return sorted(matching, key=lambda r: not r.mutating)  # mutating webhooks first, as the API server


async def admit(
    emulator: HerderEmulator, request: rendering.Request, operation: str
) -> aiohttp.web.StreamResponse | None:
    """Call the webhooks registered for this request as the API server does (failurePolicy: Fail).

    Mutations are applied to a CREATE's body; an UPDATE or DELETE is only validated.
    """
    routes = _routes(emulator, request, operation)
    if not routes:
        return None
    stored = emulator.stored(request.resource, request.namespace, request.name) if request.name else None
    old = dict(stored.raw) if stored is not None else None
    if operation == "CREATE":
        new: Any = request.data
        if isinstance(new, dict) and request.namespace and not (new.get("metadata") or {}).get("namespace"):
            new.setdefault("metadata", {})["namespace"] = request.namespace
    elif operation == "UPDATE" and old is not None and isinstance(request.data, Mapping):
        new = dict(merge_patch_dict(old, request.data))
    else:
        new = None
    user = _user_info(emulator, request.headers)
    for route in routes:
        review = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": str(uuid.uuid4()),
                "kind": {"group": request.resource.group, "version": request.resource.version, "kind": route.kind},
                "resource": {
                    "group": request.resource.group,
                    "version": request.resource.version,
                    "resource": request.resource.plural,
                },
                "namespace": request.namespace,
                "name": request.name,
                "operation": operation,
                "userInfo": user,
                "object": new,
                "oldObject": old,
                "dryRun": False,
                "options": {},
            },
        }
        try:
            async with aiohttp.ClientSession() as session:
                url = f"{emulator.webhook_url}/{route.path}"
                async with session.post(url, json=review, timeout=aiohttp.ClientTimeout(total=10)) as answer:
                    if answer.status != 200:
                        raise aiohttp.ClientError(f"webhook answered {answer.status}")
                    verdict = (await answer.json()).get("response") or {}
        except (aiohttp.ClientError, TimeoutError) as error:
            return status(500, "InternalError", f'failed calling webhook "{route.path}": {error}')
        if not verdict.get("allowed", False):
            result = verdict.get("status") or {}
            code = int(result.get("code") or 400)
            return status(code, "Forbidden" if code == 403 else "BadRequest", str(result.get("message") or ""))
        if verdict.get("patch") and operation == "CREATE" and isinstance(new, dict):
            operations = json.loads(base64.b64decode(verdict["patch"]))
            patched = jsonpatch.apply_patch(new, operations, in_place=False)
            new.clear()
            new.update(patched)
    return None
