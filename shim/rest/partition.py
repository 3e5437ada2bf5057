"""The partition's objects over REST: queues, applications and nodes, with YuniKorn's paths.

    GET /ws/v1/partitions
    GET /ws/v1/partition/{partition}/queues                    the root queue, children nested
    GET /ws/v1/partition/{partition}/queue/{queue}[?subtree]   one queue; children with ?subtree
    GET /ws/v1/partition/{partition}/placementrules
    GET /ws/v1/partition/{partition}/applications[?state=&queue=]
    GET /ws/v1/partition/{partition}/applications/{active|rejected|completed}[?status=]
    GET /ws/v1/partition/{partition}/queue/{queue}/applications[/{state}]
    GET /ws/v1/partition/{partition}/application/{appId}
    GET /ws/v1/partition/{partition}/queue/{queue}/application/{appId}
    GET /ws/v1/partition/{partition}/nodes
    GET /ws/v1/partition/{partition}/node/{nodeId}

Documents come from the core (`core/dao.py`); this module only picks, filters and answers
404 for an unknown partition, queue, application or node and 400 for a malformed queue path
or an unknown state.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from core.config import config_document
from core.config.validate import QUEUE_NAME
from core.objects.application_state import AppState
from shim.rest.context import check_partition, json_answer, offload, scheduler_of
from shim.rest.errors import bad_request, not_found

routes = web.RouteTableDef()

TERMINAL = {AppState.COMPLETED.value, AppState.FAILED.value, AppState.REJECTED.value}
STATES = {state.value.lower(): state.value for state in AppState}
# YuniKorn's /applications/{state} groups: active apps (optionally one ?status=), rejected, completed.
STATE_GROUPS: dict[str, set[str]] = {
    "active": {state.value for state in AppState} - TERMINAL,
    "rejected": {AppState.REJECTED.value},
    "completed": {AppState.COMPLETED.value, AppState.FAILED.value},
}


def queue_path(request: web.Request) -> str:
    """The `{queue}` of the path, checked part by part like YuniKorn does (400 when malformed)."""
    path = request.match_info["queue"]
    for part in path.split("."):
        if not QUEUE_NAME.match(part):
            raise bad_request(
                "Invalid queue name",
                f"queue path {path} has an invalid part {part!r}: a queue name is 1 to 64 of"
                " letters, digits and _ : # / @ -",
            )
    return path


@routes.get("/ws/v1/partitions")
async def partitions(request: web.Request) -> web.Response:
    return await json_answer(request, scheduler_of(request).partitions_document)


@routes.get("/ws/v1/partition/{partition}/queues")
async def queues(request: web.Request) -> web.Response:
    check_partition(request)
    return await json_answer(request, scheduler_of(request).queues_document)


async def _queue(request: web.Request, path: str) -> dict[str, Any]:
    doc = await offload(request, lambda: scheduler_of(request).queue_document(path))
    if doc is None:
        raise not_found("Queue not found", f"queue {path} does not exist in partition {check_partition(request)}")
    return doc


@routes.get("/ws/v1/partition/{partition}/queue/{queue}")
async def queue(request: web.Request) -> web.Response:
    check_partition(request)
    doc = await _queue(request, queue_path(request))
    doc["childNames"] = [child["queuename"] for child in doc["children"]]
    if "subtree" not in request.query:
        doc["children"] = []
    return await json_answer(request, lambda: doc)


@routes.get("/ws/v1/partition/{partition}/placementrules")
async def placement_rules(request: web.Request) -> web.Response:
    name = check_partition(request)
    config = scheduler_of(request).config

    def build() -> list[dict[str, Any]]:
        document = config_document(config)
        part = next(p for p in document["partitions"] if p["name"] == name)
        rules: list[dict[str, Any]] = part["placementrules"]
        return rules

    return await json_answer(request, build)


# -- applications ------------------------------------------------------------------------


def _states_from_query(request: web.Request, key: str) -> set[str] | None:
    """Application states named in `?key=` (comma-separated, any case); None when absent."""
    raw = request.query.get(key)
    if raw is None or not raw.strip():
        return None
    wanted: set[str] = set()
    for part in raw.split(","):
        state = STATES.get(part.strip().lower())
        if state is None:
            raise bad_request(
                "Invalid application state",
                f"?{key}={raw}: {part.strip()!r} is not an application state (one of {', '.join(STATES.values())})",
            )
        wanted.add(state)
    return wanted


def _state_group(request: web.Request) -> set[str]:
    group = request.match_info["state"].lower()
    states = STATE_GROUPS.get(group)
    if states is None:
        raise bad_request(
            "Invalid application state",
            f"applications/{request.match_info['state']}: expected one of {', '.join(STATE_GROUPS)}",
        )
    if group == "active":
        status = _states_from_query(request, "status")
        if status is not None:
            if status - states:
                raise bad_request(
                    "Invalid application state",
                    f"?status={request.query['status']}: only active states go with applications/active",
                )
            states = status
    return states


async def _applications(request: web.Request, states: set[str] | None, queue: str | None) -> web.Response:
    sched = scheduler_of(request)

    def build() -> list[dict[str, Any]]:
        return [
            doc
            for doc in sched.applications_document()
            if (states is None or doc["applicationState"] in states) and (queue is None or doc["queueName"] == queue)
        ]

    return await json_answer(request, build)


@routes.get("/ws/v1/partition/{partition}/applications")
async def applications(request: web.Request) -> web.Response:
    check_partition(request)
    queue = request.query.get("queue") or None
    return await _applications(request, _states_from_query(request, "state"), queue)


@routes.get("/ws/v1/partition/{partition}/applications/{state}")
async def applications_by_state(request: web.Request) -> web.Response:
    check_partition(request)
    return await _applications(request, _state_group(request), None)


@routes.get("/ws/v1/partition/{partition}/queue/{queue}/applications")
async def queue_applications(request: web.Request) -> web.Response:
    check_partition(request)
    path = queue_path(request)
    await _queue(request, path)
    return await _applications(request, _states_from_query(request, "state"), path)


@routes.get("/ws/v1/partition/{partition}/queue/{queue}/applications/{state}")
async def queue_applications_by_state(request: web.Request) -> web.Response:
    check_partition(request)
    path = queue_path(request)
    await _queue(request, path)
    return await _applications(request, _state_group(request), path)


async def _application(request: web.Request, queue: str | None) -> web.Response:
    partition = check_partition(request)
    app_id = request.match_info["app"]
    doc = await offload(request, lambda: scheduler_of(request).application_document(app_id))
    if doc is None or (queue is not None and doc["queueName"] != queue):
        where = f"queue {queue}" if queue is not None else f"partition {partition}"
        raise not_found("Application not found", f"application {app_id} does not exist in {where}")
    return await json_answer(request, lambda: doc)


@routes.get("/ws/v1/partition/{partition}/application/{app}")
async def application(request: web.Request) -> web.Response:
    return await _application(request, None)


@routes.get("/ws/v1/partition/{partition}/queue/{queue}/application/{app}")
async def queue_application(request: web.Request) -> web.Response:
    return await _application(request, queue_path(request))


# -- nodes -------------------------------------------------------------------------------


@routes.get("/ws/v1/partition/{partition}/nodes")
async def nodes(request: web.Request) -> web.Response:
    check_partition(request)
    return await json_answer(request, scheduler_of(request).nodes_document)


@routes.get("/ws/v1/partition/{partition}/node/{node}")
async def node(request: web.Request) -> web.Response:
    partition = check_partition(request)
    node_id = request.match_info["node"]
    doc = await offload(request, lambda: scheduler_of(request).node_document(node_id))
    if doc is None:
        raise not_found("Node not found", f"node {node_id} does not exist in partition {partition}")
    return await json_answer(request, lambda: doc)
