"""Why pods wait and where they are in line, over REST and with `herder explain`.

The world is rest_world.py's: job-3's 5-cpu pod waits because root.batch would exceed its
max, and so do job-3-b (4 cpu) and job-5-a (4 cpu, priority 100). The `herder explain`
tests run the real command against the real server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from aiohttp import web

from shim.cli import build_parser
from shim.convert.pods import pod_to_ask
from shim.explain import ExplainError, ask_kubernetes, ask_url, render
from shim.rest import RestStatus, ShimMetrics, start_rest_server
from tests.shim.rest_world import NAMESPACE, Served, build_scheduler, pod, serve

P = "/ws/v1/partition/default"


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    sched, _ = build_scheduler()
    urgent = pod("job-5-a", "job-5", "bob", [], "4")
    urgent["spec"]["priority"] = 100
    sched.add_ask(pod_to_ask(urgent, NAMESPACE))
    sched.add_ask(pod_to_ask(pod("job-3-b", "job-3", "carol", [], "4"), NAMESPACE))
    sched.schedule()
    async with serve(sched, RestStatus(identity="herder-0"), ShimMetrics()) as world:
        yield world


async def test_queue_pending_lists_waiting_pods_in_line_with_the_rule_that_holds_them(served: Served) -> None:
    status, line = await served.get(f"{P}/queue/root.batch/pending")
    assert status == 200
    assert [(e["position"], e["name"], e["priority"]) for e in line] == [
        (1, "batch/job-5-a", "100"),  # the higher priority first
        (2, "batch/job-3-a", "0"),
        (3, "batch/job-3-b", "0"),  # job-3's pods after each other, the older first
    ]
    assert {e["blockedBy"] for e in line} == {"queue-max"}
    assert "root.batch would exceed max" in line[1]["reason"]
    _, everything = await served.get(f"{P}/pending")
    assert everything == line  # the only leaf with waiting pods


async def test_pending_of_an_unknown_queue_is_a_404(served: Served) -> None:
    status, body = await served.get(f"{P}/queue/root.nope/pending")
    assert status == 404 and body["message"] == "Queue not found"


async def test_explain_finds_a_pod_by_name_or_uid_and_says_where_placed_ones_run(served: Served) -> None:
    status, doc = await served.get(f"{P}/explain?pod=batch/job-3-a")
    assert status == 200
    assert (doc["state"], doc["position"], doc["waiting"], doc["blockedBy"]) == ("Pending", 2, 3, "queue-max")
    _, same = await served.get(f"{P}/explain?pod=uid-job-3-a")
    assert same == doc
    _, placed = await served.get(f"{P}/explain?pod=batch/job-1-a")
    assert (placed["state"], placed["nodeId"]) == ("Placed", "node-0")
    status, body = await served.get(f"{P}/explain?pod=batch/ghost")
    assert status == 404 and body["message"] == "Pod not found"
    status, body = await served.get(f"{P}/explain")
    assert status == 400


async def test_herder_explain_prints_the_place_in_line_and_the_reason(
    served: Served, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = asyncio.get_running_loop()
    args = build_parser().parse_args(["explain", "batch/job-3-b", "--url", served.base])
    code = await loop.run_in_executor(None, args.handler, args)
    out = capsys.readouterr().out
    assert code == 0
    assert (
        out.splitlines()[0]
        == "batch/job-3-b (application job-3, queue root.batch): waiting, 3rd of 3 in its queue's line"
    )
    assert "held by: queue-max: queue root.batch would exceed max" in out


async def test_herder_explain_names_what_went_wrong(served: Served) -> None:
    loop = asyncio.get_running_loop()
    with pytest.raises(ExplainError, match="Pod not found: pod batch/ghost"):
        await loop.run_in_executor(None, ask_url, served.base, "batch/ghost")
    with pytest.raises(ExplainError, match="cannot reach Herder"):
        await loop.run_in_executor(None, ask_url, "http://127.0.0.1:9", "batch/job-3-a")


def test_render_says_a_pod_not_tried_yet_waits_its_turn() -> None:
    doc = {
        "name": "a/b",
        "applicationID": "x",
        "queueName": "root.a",
        "state": "Pending",
        "position": 12,
        "waiting": 40,
        "blockedBy": "",
        "reason": "",
        "priority": "0",
        "user": "u",
    }
    assert render(doc).splitlines()[:2] == [
        "a/b (application x, queue root.a): waiting, 12th of 40 in its queue's line",
        "  not tried yet: it is tried when its turn comes",
    ]


async def test_herder_explain_goes_through_the_api_servers_service_proxy(served: Served, tmp_path: Path) -> None:
    # The API server's side of `services/{name}:{port}/proxy/...` (the emulator has none): pass
    # the request on to Herder's REST server, as the API server does.
    seen: list[str] = []

    async def service_proxy(request: web.Request) -> web.Response:
        seen.append(request.path)
        async with served.session.get(f"{served.base}/{request.match_info['tail']}?{request.query_string}") as answer:
            return web.Response(status=answer.status, body=await answer.read(), content_type="application/json")

    app = web.Application()
    app.router.add_get("/api/v1/namespaces/{namespace}/services/{service}/proxy/{tail:.*}", service_proxy)
    runner = await start_rest_server(app, "127.0.0.1", 0)
    port = runner.addresses[0][1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    try:
        loop = asyncio.get_running_loop()
        doc = await loop.run_in_executor(
            None, ask_kubernetes, str(kubeconfig), "herder-system", "herder:9080", "batch/job-3-a"
        )
        assert (doc["name"], doc["position"], doc["blockedBy"]) == ("batch/job-3-a", 2, "queue-max")
        assert seen == ["/api/v1/namespaces/herder-system/services/herder:9080/proxy/ws/v1/partition/default/explain"]
        with pytest.raises(ExplainError, match="Pod not found"):
            await loop.run_in_executor(None, ask_kubernetes, str(kubeconfig), "herder-system", "herder:9080", "x/y")
    finally:
        await runner.cleanup()
