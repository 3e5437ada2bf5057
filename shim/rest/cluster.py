"""The cluster-wide endpoints YuniKorn's web UI draws its dashboard from.

    GET /ws/v1/clusters                     [{clusterName, startTime, rmBuildInformation, partition}]
    GET /ws/v1/history/apps                 [{timestamp, totalApplications}]  one a minute, 1,440 kept
    GET /ws/v1/history/containers           [{timestamp, totalContainers}]
    GET /ws/v1/scheduler/node-utilizations  [{clusterId, partition, utilizations: [{type, utilization}]}]

The history is YuniKorn's: a sampler on the REST server's loop reads two counts from the
scheduler (live applications, placed pods; O(1) under its lock) once when the server starts
and then once a minute, and keeps the newest 1,440 samples (a day). Timestamps are Unix
nanoseconds and counts strings, as YuniKorn prints them. The history lives in memory: a
restart starts it over.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from core.dao import CLUSTER_ID
from core.scheduler import Scheduler
from shim.command import herder_version
from shim.rest.context import EXECUTOR, SCHEDULER, json_answer, scheduler_of, status_of

routes = web.RouteTableDef()

HISTORY_INTERVAL = 60.0  # seconds between samples
HISTORY_KEPT = 1440
CLUSTER_NAME = "kubernetes"


@dataclass(frozen=True, slots=True)
class Sample:
    timestamp: int  # Unix nanoseconds
    applications: int
    containers: int


@dataclass
class History:
    """The newest `kept` samples, oldest first."""

    kept: int = HISTORY_KEPT
    samples: deque[Sample] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.samples = deque(self.samples, maxlen=self.kept)

    def take(self, scheduler: Scheduler, now_ns: int) -> None:
        applications, containers = scheduler.history_counts()
        self.samples.append(Sample(now_ns, applications, containers))


HISTORY = web.AppKey("history", History)


def install_history(app: web.Application, interval: float = HISTORY_INTERVAL, kept: int = HISTORY_KEPT) -> None:
    """Give `app` a history and the sampler that fills it while the server runs."""
    app[HISTORY] = History(kept)

    async def sample_forever(app: web.Application) -> AsyncIterator[None]:
        history, scheduler = app[HISTORY], app[SCHEDULER]
        loop = asyncio.get_running_loop()

        async def run() -> None:
            while True:
                await loop.run_in_executor(app[EXECUTOR], history.take, scheduler, time.time_ns())
                await asyncio.sleep(interval)

        task = asyncio.create_task(run(), name="herder-rest-history")
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    app.cleanup_ctx.append(sample_forever)


@routes.get("/ws/v1/clusters")
async def clusters(request: web.Request) -> web.Response:
    status = status_of(request)
    partition = scheduler_of(request).config.partition().name
    build = {"buildVersion": herder_version(), "buildDate": "", "rmId": CLUSTER_ID, "isPluginVersion": "false"}
    doc = [
        {
            "clusterName": CLUSTER_NAME,
            "startTime": int(status.started * 1e9),
            "rmBuildInformation": [build],
            "partition": partition,
        }
    ]
    return await json_answer(request, lambda: doc)


def _history(request: web.Request, key: str) -> list[dict[str, Any]]:
    samples = list(request.app[HISTORY].samples)
    if key == "totalApplications":
        return [{"timestamp": s.timestamp, key: str(s.applications)} for s in samples]
    return [{"timestamp": s.timestamp, key: str(s.containers)} for s in samples]


@routes.get("/ws/v1/history/apps")
async def history_apps(request: web.Request) -> web.Response:
    return await json_answer(request, lambda: _history(request, "totalApplications"))


@routes.get("/ws/v1/history/containers")
async def history_containers(request: web.Request) -> web.Response:
    return await json_answer(request, lambda: _history(request, "totalContainers"))


@routes.get("/ws/v1/scheduler/node-utilizations")
async def node_utilizations(request: web.Request) -> web.Response:
    sched = scheduler_of(request)
    return await json_answer(request, lambda: [sched.node_utilizations_document()])
