"""What every handler reaches through the application, and how it reads the scheduler safely.

The scheduler's document methods take its lock and may take a while on a big cluster (a full
state dump of 50,000 pods). Handlers therefore never call them on the event loop: `offload`
runs the call on the REST server's own small thread pool, and `json_answer` also encodes the
JSON there, so a slow dump never stalls `/healthz`, `/metrics` or kopf's watches on the loop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from aiohttp import web
from prometheus_client import CollectorRegistry

from core.scheduler import Scheduler
from shim.rest.errors import JSON_TYPE, not_found
from shim.rest.status import RestStatus
from shim.rest.validation import ConfigValidator

T = TypeVar("T")

SCHEDULER = web.AppKey("scheduler", Scheduler)
STATUS = web.AppKey("status", RestStatus)
REGISTRY = web.AppKey("registry", CollectorRegistry)
EXECUTOR = web.AppKey("executor", ThreadPoolExecutor)
VALIDATOR = web.AppKey("validator", ConfigValidator)

COMPRESS_ABOVE = 64 * 1024  # bytes; smaller answers are not worth gzip's time


def scheduler_of(request: web.Request) -> Scheduler:
    return request.app[SCHEDULER]


def status_of(request: web.Request) -> RestStatus:
    return request.app[STATUS]


async def offload(request: web.Request, call: Callable[[], T]) -> T:
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(request.app[EXECUTOR], call)


def json_response(request: web.Request, body: bytes, status: int = 200) -> web.Response:
    response = web.Response(status=status, body=body, content_type=JSON_TYPE, charset="utf-8")
    if len(body) > COMPRESS_ABOVE and "gzip" in request.headers.get("Accept-Encoding", ""):
        response.enable_compression()
    return response


async def json_answer(request: web.Request, build: Callable[[], Any], status: int = 200) -> web.Response:
    """Build a document and encode it off the event loop; answer it as JSON."""
    body = await offload(request, lambda: json.dumps(build()).encode())
    return json_response(request, body, status)


def check_partition(request: web.Request) -> str:
    """The `{partition}` of the path, which must be the scheduler's partition (404 otherwise)."""
    wanted = request.match_info["partition"]
    name = scheduler_of(request).config.partition().name
    if wanted != name:
        raise not_found("Partition not found", f"partition {wanted} does not exist (this scheduler has {name})")
    return name
