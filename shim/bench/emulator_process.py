"""The API emulator in its own process for `herder bench --emulator`, and the emulator's ceiling.

A real API server runs elsewhere, so the bench gives kmock's emulator (tests/kube/emulator.py)
a process and a core of its own: `EmulatorProcess` starts it with `multiprocessing` (spawn),
serving HTTP on 127.0.0.1, and drives it through a pipe. The child creates pods in a burst on
its own loop (each one an ADDED watch event, as if a client had POSTed it) and timestamps
every creation and every binding it applies, so creation-to-binding latency is measured on the
API server's side, on one clock, whatever client did the binding.

`measure_ceiling` is the emulator alone: the same burst bound by the cheapest possible client
(aiohttp, keep-alive, a pod watch like the operator's, each pod bound the moment it is seen,
round robin over the nodes). No scheduler can bind faster through this emulator.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import json
import multiprocessing
import time
import uuid
from multiprocessing.connection import Connection
from typing import Any

from kubernetes import client

BENCH_NAMESPACE = "bench"
CEILING_CONCURRENCY = 16


def pod_body(index: int, namespace: str = BENCH_NAMESPACE, prefix: str = "bench") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{prefix}-{index}",
            "namespace": namespace,
            "labels": {"applicationId": f"{prefix}-app-{index % 50}"},
        },
        "spec": {
            "schedulerName": "herder",
            "containers": [{"name": "work", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
        },
        "status": {"phase": "Pending"},
    }


class _TimedBindings(list):  # type: ignore[type-arg]
    """The emulator's binding records, each applied one (201) timestamped as it is appended."""

    def __init__(self, bound_at: dict[tuple[str, str], float]) -> None:
        super().__init__()
        self._bound_at = bound_at

    def append(self, record: Any) -> None:
        if record.code == 201:
            self._bound_at.setdefault((record.namespace, record.name), time.monotonic())
        super().append(record)


def _child(conn: Connection, nodes: int) -> None:
    """The emulator process: serve, then answer the parent's commands until told to stop."""
    emulator = importlib.import_module("tests.kube.emulator")
    created_at: dict[tuple[str, str], float] = {}
    bound_at: dict[tuple[str, str], float] = {}
    with emulator.EmulatorServer() as server:
        server.emulator.bindings = _TimedBindings(bound_at)
        core = client.CoreV1Api(server.api_client())
        for index in range(nodes):
            core.create_node(emulator.node_body(f"node-{index}", cpu="32", memory="128Gi", pods="250"))
        core.create_namespace(emulator.namespace_body(emulator.HERDER_NAMESPACE))
        core.create_namespace(emulator.namespace_body(BENCH_NAMESPACE))
        conn.send(server.url)
        while True:
            command, argument = conn.recv()
            if command == "stop":
                break
            if command == "create":
                count, prefix = argument
                make = functools.partial(_create, server.emulator, emulator.PODS, count, prefix, created_at)
                server.call(make, timeout=600)
                conn.send(None)
            elif command == "bound":
                conn.send(len(bound_at))
            elif command == "bindings":
                conn.send(len(server.bindings()))
            elif command == "latencies":
                conn.send(sorted(bound_at[key] - created_at[key] for key in bound_at if key in created_at))
            elif command == "span":
                first = min(created_at.values(), default=0.0)
                conn.send((first, max(bound_at.values(), default=first)))
            elif command == "writes":
                conn.send(_write_counts(server.writes()))
            elif command == "populate":
                nodes_count, pods_count = argument
                make = functools.partial(_populate, server.emulator, emulator, nodes_count, pods_count)
                server.call(make, timeout=600)
                conn.send(None)
            elif command == "cpu":
                conn.send(time.process_time())
            elif command == "reset":
                created_at.clear()
                bound_at.clear()
                conn.send(None)


def _write_counts(writes: list[tuple[str, str, str]]) -> dict[str, int]:
    """Writes by method and kind of path (names left out), most frequent first."""
    counts: dict[str, int] = {}
    for method, path, _ in writes:
        parts = path.strip("/").split("/")
        shape = "/".join(part for index, part in enumerate(parts) if index % 2 == 0 or index < 2)
        counts[f"{method} {shape}"] = counts.get(f"{method} {shape}", 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


async def _create(em: Any, pods: Any, count: int, prefix: str, created_at: dict[tuple[str, str], float]) -> None:
    """Create `count` pods as the API server would on POST: stored, stamped, announced as ADDED."""
    for index in range(count):
        body = pod_body(index, prefix=prefix)
        meta = body["metadata"]
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        meta["resourceVersion"] = em._next_version()
        key = (pods, BENCH_NAMESPACE, meta["name"])
        async with em._lock:
            em.objects[key] = body
            raw = em.objects[key].raw
            await em._buses[pods].put({"type": "ADDED", "object": raw})
        created_at[(BENCH_NAMESPACE, meta["name"])] = time.monotonic()
        if index % 50 == 49:
            await asyncio.sleep(0)  # let the server answer requests meanwhile, as a real one would


async def _populate(em: Any, emulator: Any, nodes: int, pods: int) -> None:
    """A cluster as a restarted Herder finds it: `nodes` more nodes and `pods` Herder pods bound
    and running on them, stored directly (as if created long ago; nobody watches yet)."""
    async with em._lock:
        for index in range(nodes):
            name = f"restart-node-{index}"
            body = emulator.node_body(name, cpu="64", memory="256Gi", pods="110")
            body["metadata"].update(uid=str(uuid.uuid4()), resourceVersion=em._next_version())
            em.objects[(emulator.NODES, None, name)] = body
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        for index in range(pods):
            body = pod_body(index, prefix="running")
            meta = body["metadata"]
            meta.update(uid=str(uuid.uuid4()), creationTimestamp=started, resourceVersion=em._next_version())
            body["spec"]["nodeName"] = f"restart-node-{index % max(nodes, 1)}"
            body["status"] = {"phase": "Running", "startTime": started}
            em.objects[(emulator.PODS, BENCH_NAMESPACE, meta["name"])] = body


class EmulatorProcess:
    """The emulator serving on 127.0.0.1 in a child process (one core of its own)."""

    def __init__(self, nodes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._conn, child_end = context.Pipe()
        self._process = context.Process(target=_child, args=(child_end, nodes), name="herder-bench-emulator")
        self.url = ""

    def __enter__(self) -> EmulatorProcess:
        self._process.start()
        if not self._conn.poll(120):
            self._process.kill()
            raise RuntimeError("the emulator process did not start within 120s")
        self.url = self._conn.recv()
        return self

    def __exit__(self, *_: object) -> None:
        with contextlib.suppress(BrokenPipeError, OSError):
            self._conn.send(("stop", None))
        self._process.join(30)
        if self._process.is_alive():
            self._process.kill()

    def _ask(self, command: str, argument: Any = None) -> Any:
        self._conn.send((command, argument))
        return self._conn.recv()

    def api_client(self, token: str | None = None) -> client.ApiClient:
        config = client.Configuration()
        config.host = self.url
        return client.ApiClient(config)

    def create_pods(self, count: int, prefix: str = "bench") -> None:
        self._ask("create", (count, prefix))

    def bound(self) -> int:
        """Pods bound since the last reset (each counted once)."""
        return int(self._ask("bound"))

    def bindings(self) -> int:
        """Every binding request the emulator answered, refused ones included."""
        return int(self._ask("bindings"))

    def latencies(self) -> list[float]:
        """Creation-to-binding seconds of every pod created and bound since the last reset, sorted."""
        return list(self._ask("latencies"))

    def span(self) -> tuple[float, float]:
        """(first creation, last binding) on the child's monotonic clock."""
        first, last = self._ask("span")
        return float(first), float(last)

    def writes(self) -> dict[str, int]:
        """Every write the emulator received, counted by method and path shape."""
        return dict(self._ask("writes"))

    def cpu_seconds(self) -> float:
        """CPU seconds the emulator's process has used so far (all its threads)."""
        return float(self._ask("cpu"))

    def reset(self) -> None:
        self._ask("reset")

    def populate(self, nodes: int, pods: int) -> None:
        """Store `nodes` nodes and `pods` pods bound and running on them (see `_populate`)."""
        self._ask("populate", (nodes, pods))


def quantile(ordered: list[float], q: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _bind_all(url: str, pods: int, nodes: int, created: asyncio.Event) -> None:
    """The cheapest scheduler: watch pods, bind each pending one to the next node, `CEILING_CONCURRENCY` at once."""
    import aiohttp

    queue: asyncio.Queue[str] = asyncio.Queue()
    done = asyncio.Event()
    bound = 0
    connector = aiohttp.TCPConnector(limit=CEILING_CONCURRENCY + 2)
    async with aiohttp.ClientSession(url, connector=connector) as session:

        async def watch() -> None:
            async with session.get("/api/v1/pods", params={"watch": "true"}) as response:
                async for line in response.content:
                    event = json.loads(line)
                    pod = event.get("object") or {}
                    if event.get("type") == "ADDED" and not (pod.get("spec") or {}).get("nodeName"):
                        queue.put_nowait(pod["metadata"]["name"])

        async def worker() -> None:
            nonlocal bound
            while True:
                name = await queue.get()
                node = f"node-{hash(name) % nodes}"
                body = {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": name, "namespace": BENCH_NAMESPACE},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": node},
                }
                path = f"/api/v1/namespaces/{BENCH_NAMESPACE}/pods/{name}/binding"
                async with session.post(path, json=body) as response:
                    await response.read()
                bound += 1
                if bound >= pods:
                    done.set()

        tasks = [asyncio.create_task(watch())] + [asyncio.create_task(worker()) for _ in range(CEILING_CONCURRENCY)]
        created.set()
        await done.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def measure_ceiling(server: EmulatorProcess, pods: int, nodes: int) -> dict[str, float]:
    """Pods created and bound per second through the emulator alone (no Herder), their latency, and
    the CPU per pod of the emulator and of the client (this process) during the burst."""
    import threading

    server.reset()
    ready = threading.Event()

    def run() -> None:
        async def main() -> None:
            created = asyncio.Event()
            binder = asyncio.create_task(_bind_all(server.url, pods, nodes, created))
            await created.wait()
            await asyncio.sleep(0.2)  # the watch is connected before the burst
            ready.set()
            await binder

        asyncio.run(main())

    thread = threading.Thread(target=run, name="bench-ceiling", daemon=True)
    thread.start()
    ready.wait(60)
    emulator_before, client_before = server.cpu_seconds(), time.process_time()
    server.create_pods(pods, prefix="ceiling")
    thread.join(600)
    emulator_cpu, client_cpu = server.cpu_seconds() - emulator_before, time.process_time() - client_before
    first, last = server.span()
    latencies = server.latencies()
    seconds = last - first
    return {
        "pods_per_second": round(pods / seconds, 1) if seconds > 0 else float("inf"),
        "latency_p50_ms": round(quantile(latencies, 0.5) * 1000, 1),
        "latency_p99_ms": round(quantile(latencies, 0.99) * 1000, 1),
        "emulator_cpu_ms_per_pod": round(emulator_cpu / pods * 1000, 3),
        "client_cpu_ms_per_pod": round(client_cpu / pods * 1000, 3),
    }
