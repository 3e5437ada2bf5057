"""`herder bench --event-streams N`: does following the event stream slow the scheduler down?

The synthetic cluster of `scheduling.py` is scheduled twice, each time with Herder's REST
server running on its own event loop thread (as in the operator) and an extra `--event-rate`
events a second added to the scheduler's ring (a busy cluster's records): once with no stream
open, once with N stream clients reading `/ws/v1/events/stream` from another process over
loopback. Figures: decisions/s of the scheduling loop in both runs, over wall time (what the
cluster sees: GIL and CPU contention included, so the client process and the machine's load
count too) and over the scheduling thread's own CPU time, and both slowdowns; the events each client received,
how many clients were dropped for falling behind, and the share of a CPU the REST server's
thread used while the scheduler ran (its Python part holds the GIL the scheduler needs).
Wall-time figures on a shared machine move with its load: compare runs made back to back.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from core.config import load_config, parse_settings
from core.events import NODE, SchedulingEvent
from core.scheduler import Scheduler
from shim.bench.callbacks import CountingCallbacks
from shim.bench.output import Progress, figure_lines
from shim.bench.scheduling import queue_config, synthetic_namespaces, synthetic_nodes, synthetic_pods
from shim.convert.nodes import node_to_info
from shim.convert.pods import pod_to_ask
from shim.rest import RestStatus, build_rest_app, start_rest_server
from shim.rest.events import STREAMS

TICK = 0.01  # seconds between batches of generated events


class _Server:
    """Herder's REST app for `scheduler` on 127.0.0.1, served from a thread of its own."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.loop = asyncio.new_event_loop()
        self.app = build_rest_app(scheduler, RestStatus(identity="bench"))
        ready = threading.Event()
        self.port = 0

        def serve() -> None:
            asyncio.set_event_loop(self.loop)
            runner = self.loop.run_until_complete(start_rest_server(self.app, "127.0.0.1", 0))
            self.port = runner.addresses[0][1]
            self.runner = runner
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=serve, name="bench-rest", daemon=True)
        self.thread.start()
        ready.wait(10)

    def cpu(self) -> float:
        """CPU seconds the server's thread has used (it holds the GIL for the Python part)."""

        async def read() -> float:
            return time.thread_time()

        return asyncio.run_coroutine_threadsafe(read(), self.loop).result(10)

    def open_streams(self) -> int:
        return len(self.app[STREAMS].streams)

    def dropped(self) -> int:
        return self.app[STREAMS].dropped

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _generate(scheduler: Scheduler, rate: int, stop: threading.Event) -> None:
    per_tick = max(1, int(rate * TICK))
    n = 0
    while not stop.is_set():
        began = time.perf_counter()
        for _ in range(per_tick):
            n += 1
            scheduler.events.add(SchedulingEvent(0.0, NODE, f"node-{n % 1000}", "BenchNote", "generated"))
        time.sleep(max(0.0, TICK - (time.perf_counter() - began)))


def _run(nodes: int, pods: int, streams: int, rate: int) -> dict[str, Any]:
    config = load_config(queue_config(nodes))
    settings_keys = {"event.ringBufferCapacity": "100000", "event.maxStreamsPerHost": str(max(15, streams))}
    scheduler = Scheduler(CountingCallbacks(), config, parse_settings(settings_keys))
    for node in synthetic_nodes(nodes):
        scheduler.update_node(node_to_info(node), now=0.0)
    namespaces = synthetic_namespaces()
    for pod in synthetic_pods(pods, list(namespaces)):
        scheduler.add_ask(pod_to_ask(pod, namespaces[pod["metadata"]["namespace"]]), now=0.0)
    server = _Server(scheduler)
    clients = None
    if streams:
        url = f"http://127.0.0.1:{server.port}/ws/v1/events/stream"
        clients = subprocess.Popen(
            [sys.executable, "-m", __name__, url, str(streams)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 30
        while server.open_streams() < streams and time.monotonic() < deadline:
            time.sleep(0.05)
    stop = threading.Event()
    generator = threading.Thread(target=_generate, args=(scheduler, rate, stop), daemon=True)
    generator.start()
    placed, busy, cpu = 0, 0.0, 0.0
    first_id = scheduler.events.highest_id()
    rest_cpu = server.cpu()
    while True:
        began, began_cpu = time.perf_counter(), time.thread_time()
        done = scheduler.schedule(now=1.0)
        busy += time.perf_counter() - began
        cpu += time.thread_time() - began_cpu
        placed += done
        if done == 0:
            break
    rest_cpu = server.cpu() - rest_cpu
    stop.set()
    generator.join()
    events = scheduler.events.highest_id() - first_id
    time.sleep(0.5)  # the last events reach the clients
    figures: dict[str, Any] = {
        "streams": streams,
        "placed": placed,
        "seconds": round(busy, 3),
        "decisions_per_second": round(placed / busy, 1) if busy else 0.0,
        "decisions_per_cpu_second": round(placed / cpu, 1) if cpu else 0.0,
        "events": events,
        "events_per_second": round(events / busy, 1) if busy else 0.0,
        "rest_thread_cpu_share": round(rest_cpu / busy, 3) if busy else 0.0,
    }
    if clients is not None:
        open_at_end = server.open_streams()
        out, _ = clients.communicate("", timeout=60)
        received = json.loads(out)
        figures["received_per_client_min"] = min(received) if received else 0
        figures["received_per_client_max"] = max(received) if received else 0
        figures["clients_dropped"] = streams - open_at_end
    server.stop()
    return figures


def run_stream_bench(
    nodes: int, pods: int, streams: int, rate: int, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    if progress is not None:
        progress(f"scheduling {pods:,} pods on {nodes:,} nodes, {rate:,} events/s, no stream open")
    quiet = _run(nodes, pods, 0, rate)
    if progress is not None:
        progress(f"the same with {streams:,} clients reading the event stream")
    followed = _run(nodes, pods, streams, rate)
    slowdown = 1 - followed["decisions_per_second"] / quiet["decisions_per_second"]
    cpu_slowdown = 1 - followed["decisions_per_cpu_second"] / quiet["decisions_per_cpu_second"]
    return {
        "without_streams": quiet,
        "with_streams": followed,
        "slowdown_percent": round(slowdown * 100, 1),
        "cpu_slowdown_percent": round(cpu_slowdown * 100, 1),
    }


def bench_command(args: Any) -> int:
    """`herder bench --event-streams N [--event-rate R] [--nodes --pods] [--json]`."""
    if min(args.event_streams, args.event_rate, args.nodes, args.pods) <= 0:
        print("herder bench: --event-streams, --event-rate, --nodes and --pods must be positive", file=sys.stderr)
        return 2
    progress = Progress()
    report = run_stream_bench(args.nodes, args.pods, args.event_streams, args.event_rate, progress.step)
    progress.done()
    if args.json:
        print(json.dumps({"event_streams": report}, indent=2))
        return 0
    print(
        f"event streams: scheduling {report['slowdown_percent']}% slower in wall time,"
        f" {report['cpu_slowdown_percent']}% in its CPU time, with them open"
    )
    for phase in ("without_streams", "with_streams"):
        print(f"{phase.replace('_', ' ')}:")
        print("\n".join(figure_lines(report[phase])))
    return 0


async def _clients(url: str, count: int) -> list[int]:
    """Open `count` streams, count the lines each gets until stdin closes."""
    import aiohttp

    counts = [0] * count

    async def follow(session: aiohttp.ClientSession, index: int) -> None:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=None)) as response:
            async for data in response.content.iter_any():
                counts[index] += data.count(b"\n")

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        tasks = [asyncio.create_task(follow(session, i)) for i in range(count)]
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return [c - 1 for c in counts]  # less the InstanceUUID line


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_clients(sys.argv[1], int(sys.argv[2])))))
