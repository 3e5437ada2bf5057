"""The service endpoints: quotas, state dump, configuration, health and metrics.

GET  /ws/v1/quotas                       Herder's elastic quota tree (+ system, default)
GET  /ws/v1/fullstatedump                the simulator report's `state` document (+ timestamp)
GET  /ws/v1/config                       the running configuration (YAML; JSON on Accept)
POST /ws/v1/validate-conf                queues.yaml text -> {"allowed", "reason"[, "warnings"]} (429 when busy)
GET  /ws/v1/scheduler/healthcheck        bookkeeping invariants (503 when one fails)
GET  /healthz                            the process answers
GET  /readyz                             200 once the initial sync is done; says who leads
GET  /metrics  (and /ws/v1/metrics)      Prometheus text exposition
"""

from __future__ import annotations

import json
import time
from typing import Any

import yaml
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from shim.rest.context import REGISTRY, VALIDATOR, json_answer, json_response, offload, scheduler_of, status_of
from shim.rest.errors import JSON_TYPE, too_many_requests
from shim.rest.health import health_document
from shim.rest.validation import ValidatorBusy

routes = web.RouteTableDef()


@routes.get("/ws/v1/quotas")
async def quotas(request: web.Request) -> web.Response:
    return await json_answer(request, scheduler_of(request).quotas_document)


@routes.get("/ws/v1/fullstatedump")
@routes.get("/debug/fullstatedump")
async def full_state_dump(request: web.Request) -> web.Response:
    sched = scheduler_of(request)

    def build() -> dict[str, Any]:
        return {"timestamp": time.time_ns(), **sched.state_dump()}  # Unix nanoseconds, as YuniKorn

    return await json_answer(request, build)


@routes.get("/ws/v1/config")
async def config(request: web.Request) -> web.Response:
    """The running configuration; YAML like YuniKorn unless the client accepts JSON."""
    sched = scheduler_of(request)
    if JSON_TYPE in request.headers.get("Accept", ""):
        return await json_answer(request, sched.config_document)
    text = await offload(request, lambda: yaml.safe_dump(sched.config_document(), sort_keys=False))
    return web.Response(text=text, content_type="application/x-yaml", charset="utf-8")


@routes.post("/ws/v1/validate-conf")
async def validate_conf(request: web.Request) -> web.Response:
    """Would this queues.yaml be accepted? Every problem is named in `reason`."""
    raw = await request.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        refusal = {"allowed": False, "reason": f"the body is not UTF-8 text (byte {err.start})"}
        return json_response(request, json.dumps(refusal).encode())
    try:
        verdict = await request.app[VALIDATOR].check(text)
    except ValidatorBusy as busy:
        raise too_many_requests("Too many validations", f"{busy}; retry later") from None
    return json_response(request, json.dumps(verdict.to_dict()).encode())


@routes.get("/ws/v1/scheduler/healthcheck")
async def healthcheck(request: web.Request) -> web.Response:
    sched = scheduler_of(request)
    doc = await offload(request, lambda: health_document(sched.state_dump()))
    return await json_answer(request, lambda: doc, 200 if doc["Healthy"] else 503)


# The probes answer on the event loop itself: nothing a caller sends can queue in front of them.
@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    status = status_of(request)
    return json_response(request, json.dumps({"alive": True, "identity": status.identity}).encode())


@routes.get("/readyz")
async def readyz(request: web.Request) -> web.Response:
    doc = status_of(request).document()
    status = status_of(request)
    if not status.synced:
        doc["reason"] = "the initial sync of nodes, pods, quotas and namespaces is not done yet"
    elif not doc["ready"]:
        doc["reason"] = "the admission webhook server does not listen yet"
    return json_response(request, json.dumps(doc).encode(), 200 if doc["ready"] else 503)


@routes.get("/metrics")
@routes.get("/ws/v1/metrics")
async def metrics(request: web.Request) -> web.Response:
    registry = request.app[REGISTRY]
    body = await offload(request, lambda: generate_latest(registry))
    response = web.Response(body=body)
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return response
