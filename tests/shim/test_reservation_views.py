"""Where a user sees a reservation: YuniKorn's REST fields, `herder explain`, /metrics and the
pod's Kubernetes Events.

Two 4-core nodes run four 1-core pods each, every one with `activeDeadlineSeconds: 50` and
started at T0; a 4-core pod waits from T0 and reserves node-0 once it has waited the 2 s
delay. At T0+10 the node frees by the deadlines at the latest: in 40 s.
"""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.config import load_config
from core.events import REQUEST, SchedulingEvent
from core.scheduler import Scheduler
from shim.cli import build_parser
from shim.convert.nodes import node_to_info
from shim.convert.pods import pod_to_allocation, pod_to_ask
from shim.kube.write.pod_events import NORMAL, pod_event
from shim.rest import RestStatus, ShimMetrics
from tests.shim.rest_world import Recorder, Served, node, serve
from tests.shim.test_metrics import scrape, value

T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z
P = "/ws/v1/partition/default"
QUEUES = """
partitions:
  - name: default
    placementrules: [{name: provided}]
    queues:
      - name: root
        submitacl: "*"
        queues: [{name: batch}]
"""


def pod(name: str, app: str, cpu: str, node_name: str = "", deadline: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": "herder",
        "containers": [{"name": "main", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
    }
    if node_name:
        spec["nodeName"] = node_name
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    return {
        "metadata": {
            "name": name,
            "namespace": "batch",
            "uid": f"uid-{name}",
            "creationTimestamp": "2023-11-14T22:13:20Z",
            "labels": {"yunikorn.apache.org/app-id": app, "yunikorn.apache.org/queue": "root.batch"},
        },
        "spec": spec,
        "status": {"phase": "Running", "startTime": "2023-11-14T22:13:20Z"} if node_name else {"phase": "Pending"},
    }


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    clock = [T0]
    sched = Scheduler(Recorder(), load_config(textwrap.dedent(QUEUES)), clock=lambda: clock[0])
    namespace = {"metadata": {"name": "batch"}}
    for n in range(2):
        sched.update_node(node_to_info(node(f"node-{n}")))
        for i in range(4):
            running = pod(f"run-{n}-{i}", "runners", "1", f"node-{n}", deadline=50)
            sched.add_allocation(pod_to_allocation(running, namespace))
    sched.add_ask(pod_to_ask(pod("train", "train-1", "4"), namespace))
    sched.schedule()
    clock[0] = T0 + 10
    sched.schedule()
    async with serve(sched, RestStatus(identity="herder-0"), ShimMetrics()) as world:
        yield world


async def test_nodes_and_applications_show_the_reservation_as_yunikorn_does(served: Served) -> None:
    _, nodes = await served.get(f"{P}/nodes")
    reserved = {n["nodeID"]: n["reservations"] for n in nodes if n["isReserved"]}
    assert reserved == {"node-0": ["train-1|uid-train"]}
    _, app = await served.get(f"{P}/application/train-1")
    assert app["hasReserved"] is True and app["reservations"] == ["node-0|uid-train"]


async def test_herder_explain_says_which_node_is_reserved_and_when_it_frees(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    _, doc = await served.get(f"{P}/explain?pod=batch/train")
    assert doc["reservation"] == {
        "nodeID": "node-0",
        "resource": {"vcore": 4000, "memory": 2**30, "pods": 1},
        "freesInSeconds": 40.0,
    }
    loop = asyncio.get_running_loop()
    args = build_parser().parse_args(["explain", "batch/train", "--url", served.base])
    assert await loop.run_in_executor(None, args.handler, args) == 0
    out = capsys.readouterr().out
    assert "node node-0 is reserved for you; it frees by about t+40 s" in out


async def test_metrics_count_reserved_nodes_and_cores(served: Served) -> None:
    s = await scrape(served)
    assert value(s, "herder_reserved_nodes") == 1
    assert value(s, "herder_reserved_resource", resource="vcore") == 4000
    assert value(s, "herder_reserved_idle_resource", resource="vcore") == 0  # node-0 is still full
    assert value(s, "herder_reservations_total") == 1
    assert value(s, "herder_backfills_total") == 0


def test_reservations_reach_the_pod_as_kubernetes_events() -> None:
    for reason in ("Reserved", "ReservationEnded", "Backfilled"):
        event = SchedulingEvent(0.0, REQUEST, "uid-train", reason, "node node-0 ...", name="batch/train")
        note = pod_event(event, lambda key: None)
        assert note is not None and (note.type, note.reason) == (NORMAL, reason)
        assert (note.ref.namespace, note.ref.name) == ("batch", "train")
