"""A small known cluster behind a real REST server, for the REST and /metrics tests.

Kubernetes-shaped nodes, pods and an ElasticQuota go through `shim/convert/` into a real
`Scheduler`, exactly as the operator feeds it; one scheduling cycle places what fits. The
world, in core units (vcore millicores, memory bytes):

- nodes node-0, node-1 (4 cpu, 8Gi, 10 pods each) and node-2 (same size, cordoned);
- queue root.batch: guaranteed vcore 2000 / memory 4Gi, max vcore 6000 / memory 12Gi,
  maxapplications 10; limits: user alice vcore 4000 and 3 apps, group ml vcore 5000;
- job-1 (alice, groups ml): two pods of 1 cpu / 1Gi, placed;
- job-2 (bob, no groups): one pod of 1 cpu / 1Gi, placed;
- job-3 (carol): one pod of 5 cpu / 1Gi, pending (above the queue's max);
- a foreign pod of 500m / 256Mi bound by another scheduler to node-0;
- ElasticQuota batch (namespace batch): min cpu 2, max cpu 6.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from core.config import load_config
from core.events import SchedulingEvent
from core.objects.ask import Allocation
from core.scheduler import Scheduler
from shim.convert.nodes import node_to_info
from shim.convert.pods import pod_to_allocation, pod_to_ask
from shim.convert.quotas import quota_to_spec
from shim.rest import RestStatus, ShimMetrics, build_rest_app, start_rest_server

GI = 1024**3
NOW = 1_700_000_000.0

QUEUES = """
partitions:
  - name: default
    placementrules:
      - name: tag
        value: namespace
        create: true
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: batch
            maxapplications: 10
            resources:
              guaranteed: {vcore: 2, memory: 4Gi}
              max: {vcore: 6, memory: 12Gi}
            limits:
              - limit: alice
                users: [alice]
                maxresources: {vcore: 4}
                maxapplications: 3
              - limit: ml group
                groups: [ml]
                maxresources: {vcore: 5}
"""


class Recorder:
    """The shim side of the core's interface: remembers what the core asked for."""

    def __init__(self) -> None:
        self.binds: list[Allocation] = []
        self.events: list[SchedulingEvent] = []

    def bind(self, allocation: Allocation) -> None:
        self.binds.append(allocation)

    def evict(self, allocation: Allocation, reason: str) -> None:
        pass

    def report(self, event: SchedulingEvent) -> None:
        self.events.append(event)


def node(name: str, unschedulable: bool = False) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": {"unschedulable": unschedulable},
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(
    name: str, app: str, user: str, groups: list[str], cpu: str, scheduler: str = "herder", node_name: str = ""
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        "containers": [{"name": "main", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
        spec["containers"][0]["resources"]["requests"]["memory"] = "256Mi"
    return {
        "metadata": {
            "name": name,
            "namespace": "batch",
            "uid": f"uid-{name}",
            "creationTimestamp": "2023-11-14T22:13:20Z",
            "labels": {"yunikorn.apache.org/app-id": app},
            "annotations": {"yunikorn.apache.org/user.info": json.dumps({"user": user, "groups": groups})},
        },
        "spec": spec,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


NAMESPACE = {"metadata": {"name": "batch"}}
QUOTA = {
    "metadata": {"name": "batch", "namespace": "batch", "labels": {}, "annotations": {}},
    "spec": {"min": {"cpu": "2"}, "max": {"cpu": "6"}},
}


def build_scheduler() -> tuple[Scheduler, Recorder]:
    recorder = Recorder()
    sched = Scheduler(recorder, load_config(textwrap.dedent(QUEUES)), clock=lambda: NOW)
    for name, cordoned in (("node-0", False), ("node-1", False), ("node-2", True)):
        sched.update_node(node_to_info(node(name, cordoned)))
    sched.update_quota(quota_to_spec(QUOTA))
    sched.add_allocation(
        pod_to_allocation(pod("other", "x", "nobody", [], "500m", "default-scheduler", "node-0"), NAMESPACE)
    )
    for item in (
        pod("job-1-a", "job-1", "alice", ["ml"], "1"),
        pod("job-1-b", "job-1", "alice", ["ml"], "1"),
        pod("job-2-a", "job-2", "bob", [], "1"),
        pod("job-3-a", "job-3", "carol", [], "5"),
    ):
        sched.add_ask(pod_to_ask(item, NAMESPACE))
    sched.schedule()
    return sched, recorder


@dataclass
class Served:
    """A running REST server on 127.0.0.1 and a client session pointed at it."""

    sched: Scheduler
    status: RestStatus
    shim_metrics: ShimMetrics
    session: aiohttp.ClientSession
    base: str
    app: web.Application

    async def get(self, path: str, **kwargs: Any) -> tuple[int, Any]:
        return await self.request("GET", path, **kwargs)

    async def request(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        """Status and body: parsed JSON when the server says it is JSON, else text."""
        async with self.session.request(method, self.base + path, **kwargs) as response:
            body = await response.read()
            if response.content_type == "application/json":
                return response.status, json.loads(body)
            return response.status, body.decode()


@asynccontextmanager
async def serve(
    sched: Scheduler, status: RestStatus, shim_metrics: ShimMetrics, **options: Any
) -> AsyncIterator[Served]:
    """`options` go to `build_rest_app` (a shorter `history_interval`, an `access` policy, say)."""
    app = build_rest_app(sched, status, shim_metrics, **options)
    runner: web.AppRunner = await start_rest_server(app, "127.0.0.1", 0)
    host, port = runner.addresses[0][:2]
    try:
        async with aiohttp.ClientSession() as session:
            yield Served(sched, status, shim_metrics, session, f"http://{host}:{port}", app)
    finally:
        await runner.cleanup()
