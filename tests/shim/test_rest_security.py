"""The REST API under hostile callers: tokens, CORS, body limits, and validate-conf kept in its box.

A caller who can reach the port must not be able to stall the probes (a liveness restart, or
with readiness failing, the webhook's `failurePolicy: Fail` blocking pod creation), read the
API when a token is configured, or make a browser page read it from another origin.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shim.cli import main
from shim.command import EXIT_INVALID
from shim.rest import RestStatus, ShimMetrics
from shim.rest.access import RestAccess
from shim.rest.validation import ConfigValidator
from tests.shim.rest_world import Served, build_scheduler, serve

P = "/ws/v1/partition/default"


def alias_bomb(levels: int = 9, fan: int = 8) -> str:
    """A few hundred bytes of queues.yaml whose aliases expand to a tree of fan**levels queues."""
    lines = ["partitions:", "  - name: default", "    queues:", "      - name: root", "        queues:"]
    lines.append("          - &q0 {name: q, queues: []}")
    lines += [f"          - &q{i} {{name: q, queues: [{', '.join([f'*q{i - 1}'] * fan)}]}}" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    sched, _ = build_scheduler()
    async with serve(sched, RestStatus(identity="herder-0"), ShimMetrics()) as world:
        yield world


async def test_an_alias_bomb_is_refused_naming_the_limit(served: Served) -> None:
    status, body = await asyncio.wait_for(served.request("POST", "/ws/v1/validate-conf", data=alias_bomb()), 30)
    assert status == 200
    assert body["allowed"] is False
    assert "aliases are expanded" in body["reason"]


async def test_twenty_hostile_validations_leave_healthz_answering_while_they_run(served: Served) -> None:
    bomb = alias_bomb()
    hostile = [asyncio.ensure_future(served.request("POST", "/ws/v1/validate-conf", data=bomb)) for _ in range(20)]
    answered_while_running = 0
    try:
        while not all(task.done() for task in hostile):
            status, body = await asyncio.wait_for(served.get("/healthz"), 5)
            assert status == 200 and body["alive"] is True
            if not all(task.done() for task in hostile):
                answered_while_running += 1
            status, _ = await asyncio.wait_for(served.get(f"{P}/queues"), 5)
            assert status == 200
            await asyncio.sleep(0.02)
        results = [await task for task in hostile]
    finally:
        for task in hostile:
            task.cancel()
    assert answered_while_running >= 1
    refused = [body for status, body in results if status == 429]
    checked = [body for status, body in results if status == 200]
    assert refused and checked  # one runs at a time, a few wait, the rest are turned away at once
    assert all(body["allowed"] is False for body in checked)
    assert all(body["message"] == "Too many validations" for body in refused)


async def test_a_validation_past_its_time_limit_is_stopped_with_a_reason() -> None:
    sched, _ = build_scheduler()
    async with serve(sched, RestStatus(), ShimMetrics(), validator=ConfigValidator(time_limit=0.01)) as world:
        status, body = await world.request("POST", "/ws/v1/validate-conf", data="partitions: []\n")
    assert status == 200
    assert body == {"allowed": False, "reason": "checking took longer than 0.01s and was stopped"}


async def test_a_body_larger_than_a_configmap_is_refused_with_413(served: Served) -> None:
    status, body = await served.request("POST", "/ws/v1/validate-conf", data="#" * (2 * 1024 * 1024))
    assert status == 413
    assert body["status_code"] == 413


async def test_a_shared_token_is_required_everywhere_but_the_probes() -> None:
    sched, _ = build_scheduler()
    access = RestAccess(token="s3cret")
    async with serve(sched, RestStatus(identity="herder-0"), ShimMetrics(), access=access) as world:
        status, body = await world.get(f"{P}/queues")
        assert status == 401 and body["message"] == "Unauthorized"
        status, _ = await world.get(f"{P}/queues", headers={"Authorization": "Bearer wrong"})
        assert status == 401
        status, _ = await world.get("/metrics")
        assert status == 401
        status, root = await world.get(f"{P}/queues", headers={"Authorization": "Bearer s3cret"})
        assert status == 200 and root["queuename"] == "root"
        assert (await world.get("/healthz"))[0] == 200
        assert (await world.get("/readyz"))[0] == 503  # open, and says it is not synced yet


async def test_a_reviewed_token_is_asked_about_once_and_remembered() -> None:
    asked: list[str] = []

    def review(token: str) -> bool:
        asked.append(token)
        return token == "alice-token"

    sched, _ = build_scheduler()
    access = RestAccess(review=review)
    async with serve(sched, RestStatus(), ShimMetrics(), access=access) as world:
        for _ in range(3):
            status, _ = await world.get(f"{P}/queues", headers={"Authorization": "Bearer alice-token"})
            assert status == 200
        status, _ = await world.get(f"{P}/queues", headers={"Authorization": "Bearer mallory-token"})
        assert status == 401
    assert asked == ["alice-token", "mallory-token"]


async def test_a_configured_origin_gets_cors_headers_and_preflight_answers() -> None:
    sched, _ = build_scheduler()
    access = RestAccess(cors_origins=("https://ui.example",))
    async with serve(sched, RestStatus(), ShimMetrics(), access=access) as world:
        ok = {"Origin": "https://ui.example"}
        async with world.session.get(world.base + f"{P}/queues", headers=ok) as response:
            assert response.headers["Access-Control-Allow-Origin"] == "https://ui.example"
        async with world.session.options(world.base + "/ws/v1/validate-conf", headers=ok) as response:
            assert response.status == 204
            assert "POST" in response.headers["Access-Control-Allow-Methods"]
        other = {"Origin": "https://evil.example"}
        async with world.session.get(world.base + f"{P}/queues", headers=other) as response:
            assert "Access-Control-Allow-Origin" not in response.headers


def test_herder_validate_refuses_an_alias_bomb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The limits hold in the checking code itself (the CLI has no time limit to fall back on)."""
    bomb = tmp_path / "queues.yaml"
    bomb.write_text(alias_bomb(levels=12))
    assert main(["validate", str(bomb)]) == EXIT_INVALID
    assert "aliases are expanded" in capsys.readouterr().err


async def test_a_client_gone_mid_body_is_one_debug_line_not_an_error(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    """Any caller who can reach the port can open a validation and hang up half-way; that used to
    be an ERROR with a full traceback each time."""
    caplog.set_level(logging.DEBUG)
    host, port = served.base.removeprefix("http://").rsplit(":", 1)
    for _ in range(3):
        _, writer = await asyncio.open_connection(host, int(port))
        head = "POST /ws/v1/validate-conf HTTP/1.1\r\nHost: herder\r\nContent-Length: 1000\r\n\r\n"
        writer.write(head.encode() + b"partitions:\n  - name: def")
        await writer.drain()
        writer.close()
        await writer.wait_closed()
    status, _ = await served.request("GET", "/healthz")
    assert status == 200
    for _ in range(50):  # the server sees each hang-up on its own time
        if sum("went away" in r.getMessage() for r in caplog.records) == 3:
            break
        await asyncio.sleep(0.1)
    mine = [r for r in caplog.records if r.name.startswith(("herder", "aiohttp"))]
    assert not [r for r in mine if r.levelno >= logging.WARNING or r.exc_info], [r.getMessage() for r in mine]
    gone = [r for r in mine if "went away" in r.getMessage()]
    assert len(gone) == 3 and all(r.levelno == logging.DEBUG and "\n" not in r.getMessage() for r in gone)
