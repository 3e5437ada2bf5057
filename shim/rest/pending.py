"""Why pods wait and where they are in line (Herder's own, in the spirit of Kueue's visibility API).

    GET /ws/v1/partition/{partition}/queue/{queue}/pending   the queue's waiting pods, in order
    GET /ws/v1/partition/{partition}/pending                 the same for every queue
    GET /ws/v1/partition/{partition}/explain?pod=ns/name     one pod (also by uid)

Each waiting pod has its `position` in its leaf queue, `blockedBy` (the first rule that held
it on its last try) and `reason`; `core.pending` says how the order is made. The list is read
under the scheduler's lock without sorting; the sort and the JSON happen after, on the REST
server's threads.
"""

from __future__ import annotations

from aiohttp import web

from shim.rest.context import check_partition, json_answer, offload, scheduler_of
from shim.rest.errors import bad_request, not_found
from shim.rest.partition import queue_path

routes = web.RouteTableDef()


async def _pending(request: web.Request, path: str) -> web.Response:
    partition = check_partition(request)
    docs = await offload(request, lambda: scheduler_of(request).pending_document(path))
    if docs is None:
        raise not_found("Queue not found", f"queue {path} does not exist in partition {partition}")
    return await json_answer(request, lambda: docs)


@routes.get("/ws/v1/partition/{partition}/queue/{queue}/pending")
async def queue_pending(request: web.Request) -> web.Response:
    return await _pending(request, queue_path(request))


@routes.get("/ws/v1/partition/{partition}/pending")
async def partition_pending(request: web.Request) -> web.Response:
    return await _pending(request, "root")


@routes.get("/ws/v1/partition/{partition}/explain")
async def explain(request: web.Request) -> web.Response:
    partition = check_partition(request)
    pod = request.query.get("pod", "").strip()
    if not pod:
        raise bad_request("Invalid pod", "?pod= names the pod: namespace/name or its uid")
    doc = await offload(request, lambda: scheduler_of(request).explain(pod))
    if doc is None:
        raise not_found(
            "Pod not found", f"pod {pod} is neither waiting for nor placed by Herder in partition {partition}"
        )
    return await json_answer(request, lambda: doc)
