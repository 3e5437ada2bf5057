"""`herder explain` against a token-protected REST API, through the service proxy with the
kubeconfig's credentials, and what it says when Herder cannot be asked.

The REST server is the real one (rest_world.py's cluster, where batch/job-3-a waits); the API
server's service proxy is played by a small aiohttp app that, like the API server, checks the
caller's credentials and does not pass the Authorization header on.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from shim.cli import main
from shim.explain import ExplainError, ask_kubernetes, ask_url
from shim.rest import RestStatus, ShimMetrics, start_rest_server
from shim.rest.access import RestAccess
from tests.shim.rest_world import Served, build_scheduler, serve

TOKEN = "s3cret-herder-token"
KUBE_TOKEN = "kube-user-token"
POD = "batch/job-3-a"


@pytest.fixture
async def locked() -> AsyncIterator[Served]:
    sched, _ = build_scheduler()
    async with serve(sched, RestStatus(identity="herder-0"), ShimMetrics(), access=RestAccess(token=TOKEN)) as world:
        yield world


async def _run(*argv: str) -> int:
    return await asyncio.get_running_loop().run_in_executor(None, main, list(argv))


async def test_token_file_sends_the_bearer_token(
    locked: Served, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")  # as `kubectl create secret --from-file` may leave it
    assert await _run("explain", POD, "--url", locked.base, "--token-file", str(token_file)) == 0
    assert capsys.readouterr().out.startswith("batch/job-3-a (application job-3, queue root.batch): waiting")


async def test_a_missing_or_wrong_token_says_what_to_do(locked: Served, tmp_path: Path) -> None:
    loop = asyncio.get_running_loop()
    with pytest.raises(ExplainError, match="wants a bearer token: give it with --token-file FILE"):
        await loop.run_in_executor(None, ask_url, locked.base, POD)
    with pytest.raises(ExplainError, match="the token from --token-file was refused"):
        await loop.run_in_executor(None, ask_url, locked.base, POD, "wrong")


def test_an_unreadable_or_empty_token_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", POD, "--token-file", str(tmp_path / "absent")]) == 1
    assert f"cannot read the token file {tmp_path / 'absent'}: No such file or directory" in capsys.readouterr().err
    (tmp_path / "empty").write_text("\n")
    assert main(["explain", POD, "--token-file", str(tmp_path / "empty")]) == 1
    assert "is empty" in capsys.readouterr().err


def test_token_file_with_kubeconfig_is_refused_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", POD, "--kubeconfig", "--token-file", "t"]) == 2
    assert "service proxy does not pass a bearer token on to Herder" in capsys.readouterr().err


def test_connection_refused_names_the_port_forward_and_the_options() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ExplainError) as raised:
        ask_url(f"http://127.0.0.1:{port}", POD)
    message = str(raised.value)
    assert "Connection refused" in message
    assert f"nothing listens on 127.0.0.1:{port}" in message
    assert f"kubectl -n herder-system port-forward svc/herder {port}" in message
    assert "herder simulate NAME --serve" in message
    assert "--url" in message and "--kubeconfig" in message


class FakeApiServer:
    """The API server's `services/{name}:{port}/proxy/...`: it authenticates the caller by the
    kubeconfig's token, then passes the request on to Herder without the Authorization header."""

    def __init__(self, herder: Served) -> None:
        self.herder = herder
        self.seen: list[str] = []
        self.runner: web.AppRunner | None = None

    async def proxy(self, request: web.Request) -> web.Response:
        self.seen.append(request.headers.get("Authorization", ""))
        if request.headers.get("Authorization") != f"Bearer {KUBE_TOKEN}":
            status = {"kind": "Status", "status": "Failure", "message": "Unauthorized", "code": 401}
            return web.json_response(status, status=401)
        url = f"{self.herder.base}/{request.match_info['tail']}?{request.query_string}"
        async with self.herder.session.get(url) as answer:  # no Authorization: the API server keeps it
            return web.Response(status=answer.status, body=await answer.read(), content_type="application/json")

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/api/v1/namespaces/{namespace}/services/{service}/proxy/{tail:.*}", self.proxy)
        self.runner = await start_rest_server(app, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.runner.addresses[0][1]}"


def _kubeconfig(tmp_path: Path, server: str, user: dict[str, Any]) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return str(path)


@pytest.fixture
async def open_herder() -> AsyncIterator[Served]:
    sched, _ = build_scheduler()
    async with serve(sched, RestStatus(identity="herder-0"), ShimMetrics()) as world:
        yield world


async def test_the_kubeconfigs_token_authenticates_to_the_api_server(open_herder: Served, tmp_path: Path) -> None:
    api = FakeApiServer(open_herder)
    server = await api.start()
    loop = asyncio.get_running_loop()
    try:
        kubeconfig = _kubeconfig(tmp_path, server, {"token": KUBE_TOKEN})
        doc = await loop.run_in_executor(None, ask_kubernetes, kubeconfig, "herder-system", "herder:9080", POD)
        assert (doc["name"], doc["blockedBy"]) == (POD, "queue-max")
        assert api.seen == [f"Bearer {KUBE_TOKEN}"]
        anonymous = _kubeconfig(tmp_path, server, {})
        with pytest.raises(ExplainError, match=r"HTTP 401: Unauthorized\n  the API server did not accept"):
            await loop.run_in_executor(None, ask_kubernetes, anonymous, "herder-system", "herder:9080", POD)
    finally:
        assert api.runner is not None
        await api.runner.cleanup()


async def test_a_token_protected_herder_behind_the_proxy_explains_the_port_forward(
    locked: Served, tmp_path: Path
) -> None:
    api = FakeApiServer(locked)
    server = await api.start()
    try:
        kubeconfig = _kubeconfig(tmp_path, server, {"token": KUBE_TOKEN})
        with pytest.raises(ExplainError) as raised:
            await asyncio.get_running_loop().run_in_executor(
                None, ask_kubernetes, kubeconfig, "herder-system", "herder:9080", POD
            )
        message = str(raised.value)
        assert "a valid bearer token is required" in message  # Herder's own 401, through the proxy
        assert "kubectl -n herder-system port-forward svc/herder 9080" in message
        assert "--url with --token-file" in message
    finally:
        assert api.runner is not None
        await api.runner.cleanup()
