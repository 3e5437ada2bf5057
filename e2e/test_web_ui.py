"""YuniKorn's own web UI (yunikorn-web) renders Herder's data: every page, no error page, no
`<nil>` pod name and no 1970 date, checked in headless Chromium with a screenshot per page:
against Herder on a cluster (or the emulator), and against a served simulation (`herder
simulate queue-preemption --serve`, or the one at HERDER_SIMULATION_URL).

The UI is Apache yunikorn-web's production build, which is not part of this repository: build
it from its public repository and point `YUNIKORN_WEB_DIST` at `dist/yunikorn-web` (see
docs/web-ui.md). Without it, or without selenium, Chromium and ChromeDriver, the test is
skipped with a message saying what is missing. A small server plays yunikorn-web's own: it
serves the build and proxies `/ws/` to Herder's REST API, as the published image does with
`PROXY_URL`. Screenshots go to `HERDER_E2E_ARTEFACTS` (default `build/e2e-web-ui`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from e2e.backends import ROOT, Cluster
from e2e.workloads import bound, eventually, herder_pod, rest

DIST = os.environ.get("YUNIKORN_WEB_DIST", "")
ARTEFACTS = Path(os.environ.get("HERDER_E2E_ARTEFACTS", ROOT / "build" / "e2e-web-ui"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
# Chromium as root in a container, on a machine with no way out: no sandbox, no background traffic.
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1600,1000",
)
SESSION = web.AppKey("session", aiohttp.ClientSession)


def _missing() -> str | None:
    if not DIST or not (Path(DIST) / "index.html").is_file():
        return "YUNIKORN_WEB_DIST does not name a yunikorn-web production build (dist/yunikorn-web); see docs/web-ui.md"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    if CHROMIUM is None or CHROMEDRIVER is None:
        return "Chromium and ChromeDriver are not installed (Debian: apt-get install chromium chromium-driver)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def ui_app(dist: Path, herder_url: str) -> web.Application:
    """yunikorn-web's server in miniature: the build's files, `/ws/` proxied to Herder."""
    app = web.Application()

    async def proxy(request: web.Request) -> web.StreamResponse:
        session = request.app[SESSION]
        async with session.request(
            request.method, herder_url + request.rel_url.path_qs, data=await request.read()
        ) as answer:
            body = await answer.read()
            return web.Response(status=answer.status, body=body, content_type=answer.content_type)

    async def files(request: web.Request) -> web.StreamResponse:
        path = (dist / request.match_info["path"]).resolve()
        if not path.is_file() or dist.resolve() not in path.parents:
            path = dist / "index.html"
        return web.FileResponse(path)

    async def session(app: web.Application) -> AsyncIterator[None]:
        app[SESSION] = aiohttp.ClientSession()
        yield
        await app[SESSION].close()

    app.cleanup_ctx.append(session)
    app.router.add_route("*", "/ws/{tail:.*}", proxy)
    app.router.add_get("/{path:.*}", files)
    return app


@contextmanager
def ui_server(herder_url: str) -> Iterator[str]:
    """yunikorn-web's server in miniature on a free port, in a thread; yields its URL."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, object] = {}

    def serve() -> None:
        asyncio.set_event_loop(loop)
        runner = web.AppRunner(ui_app(Path(DIST), herder_url))
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        holder["runner"] = runner
        holder["port"] = runner.addresses[0][1]
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, name="yunikorn-web", daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield f"http://127.0.0.1:{holder['port']}"
    finally:
        runner = holder["runner"]
        assert isinstance(runner, web.AppRunner)
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


@pytest.fixture
def ui_url(cluster: Cluster) -> Iterator[str]:
    with ui_server(cluster.herder_url) as url:
        yield url


@pytest.fixture
def browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _page_text(driver: object) -> str:
    from selenium.webdriver.common.by import By

    return str(driver.find_element(By.TAG_NAME, "body").text)  # type: ignore[attr-defined]


def test_every_yunikorn_web_page_renders_herders_data(
    cluster: Cluster, namespace: str, ui_url: str, browser: object
) -> None:
    for index in range(3):
        cluster.core.create_namespaced_pod(namespace, herder_pod(f"web-{index}", cpu="500m"))
    cluster.core.create_namespaced_pod(namespace, herder_pod("too-big", cpu="64"))
    node = bound(cluster, namespace, "web-0")
    for index in (1, 2):
        bound(cluster, namespace, f"web-{index}")
    queue = f"root.e2e.{namespace}"
    [app] = rest(cluster, f"/ws/v1/partition/default/queue/{queue}/applications")
    problems = check_pages(browser, ui_url, queue, app["applicationID"], node, f"{namespace}/web-0", "cluster")
    assert not problems, "; ".join(problems)


@pytest.fixture
def simulation_url() -> Iterator[str]:
    """`herder simulate queue-preemption --serve --speed 20` (docs/web-ui.md), or the served
    simulation at HERDER_SIMULATION_URL when one is given."""
    given = os.environ.get("HERDER_SIMULATION_URL")
    if given:
        yield given.rstrip("/")
        return
    command = [sys.executable, "-m", "shim.cli", "simulate", "queue-preemption", "--serve", "--speed", "20"]
    command += ["--port", "0", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        found = re.search(r"on (http://127\.0\.0\.1:\d+) ", process.stderr.readline())
        assert found, "herder simulate --serve did not say where it serves"
        yield found.group(1)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)


def test_every_yunikorn_web_page_renders_a_served_simulation(simulation_url: str, browser: object) -> None:
    def ml_running() -> dict[str, object] | None:
        with urllib.request.urlopen(f"{simulation_url}/ws/v1/partition/default/queue/root.ml/applications") as answer:
            apps = json.loads(answer.read())
        return apps[0] if apps and apps[0].get("allocations") else None

    app = eventually(ml_running, "ml's pods to run (t=90 of the simulation, 4.5 s in)", timeout=60)
    allocation = app["allocations"][0]  # type: ignore[index]
    tags = allocation["allocationTags"]
    pod_name = f"{tags['kubernetes.io/meta/namespace']}/{tags['kubernetes.io/meta/podName']}"
    with ui_server(simulation_url) as ui_url:
        problems = check_pages(
            browser, ui_url, "root.ml", str(app["applicationID"]), allocation["nodeId"], pod_name, "simulation"
        )
    assert not problems, "; ".join(problems)


def check_pages(
    driver: object, ui_url: str, queue: str, app_id: str, node: str, pod_name: str, prefix: str
) -> list[str]:
    """Open each page; what went wrong on any (error page, `<nil>` pod, a date in 1970)."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    # (page, what to open, text the page must then show)
    pages = (
        ("dashboard", "#/dashboard", "Application History"),
        ("queues", "#/queues", "root"),
        ("applications", f"#/applications?partition=default&queue={queue}&applicationId={app_id}", pod_name),
        ("nodes", "#/nodes", node),
        ("status", "#/status", "Negative resources"),
    )
    problems: list[str] = []
    for page, path, expected in pages:
        driver.get(f"{ui_url}/{path}")  # type: ignore[attr-defined]
        text = eventually(partial(_showing, driver, expected), f"the {page} page to show {expected!r}", timeout=30)
        if page == "nodes":  # open the node's allocations
            _click_row(driver, node)
            text = eventually(lambda: _showing(driver, pod_name), f"node {node}'s pods", timeout=30)
        driver.save_screenshot(str(ARTEFACTS / f"{prefix}-{page}.png"))  # type: ignore[attr-defined]
        if "/error" in str(driver.current_url):  # type: ignore[attr-defined]
            problems.append(f"{page}: the UI went to its error page ({text[:200]!r})")
        if "<nil>" in text:
            problems.append(f"{page}: a pod shows as <nil>")
        if re.search(r"\b1970\b", text):
            problems.append(f"{page}: a date in 1970")
    return problems


def _showing(driver: object, expected: str) -> str | None:
    """The page's text once it shows `expected` (Angular draws after the REST answers come)."""
    text = _page_text(driver)
    return text if expected in text else None


def _click_row(driver: object, label: str) -> None:
    from selenium.webdriver.common.by import By

    rows = driver.find_elements(By.CSS_SELECTOR, "mat-row")  # type: ignore[attr-defined]
    next(row for row in rows if label in row.text).click()
