"""`herder bench --emulator`: the whole Kubernetes shim timed against kmock's API emulator.

What it measures is the shim's own cost on top of the core: kopf's watches, the conversions,
the start-up listing, the binder's HTTP round trips and a restart's recovery. One process holds
the emulator and the operator (they share the GIL and the machine), so the figures are a floor
for a real API server, not a promise. The emulator keeps every object version in memory, so
sizes are capped (`MAX_NODES`, `MAX_PODS`).

It needs a source checkout with the dev extra (kmock and tests/kube/emulator.py).
"""

from __future__ import annotations

import argparse
import importlib
import resource
import time
import uuid
from typing import Any

from kubernetes import client

MAX_NODES = 500
MAX_PODS = 5000
SETTLE_TIMEOUT = 600.0


def _pod(index: int, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"bench-{index}",
            "namespace": namespace,
            "uid": str(uuid.uuid4()),
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "resourceVersion": "1",
            "labels": {"applicationId": f"bench-app-{index % 50}"},
        },
        "spec": {
            "schedulerName": "herder",
            "containers": [{"name": "work", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
        },
        "status": {"phase": "Pending"},
    }


def _wait(predicate: Any, what: str) -> float:
    began = time.monotonic()
    while not predicate():
        if time.monotonic() - began > SETTLE_TIMEOUT:
            raise RuntimeError(f"bench through the emulator: gave up waiting for {what}")
        time.sleep(0.05)
    return time.monotonic() - began


def _maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_emulator_bench(args: argparse.Namespace) -> dict[str, Any]:
    try:
        # Test code, not part of the installed package: imported by name so type checks of shim stay apart.
        emulator = importlib.import_module("tests.kube.emulator")
    except ImportError as error:
        raise RuntimeError(
            f"--emulator needs a source checkout with the dev extra (pip install -e '.[dev]'): {error}"
        ) from None

    nodes = max(1, min(int(args.nodes), MAX_NODES))
    pods = max(1, min(int(args.pods), MAX_PODS))
    memory_before = _maxrss_mib()
    with emulator.EmulatorServer() as server:
        core = client.CoreV1Api(server.api_client())
        for index in range(nodes):
            core.create_node(emulator.node_body(f"node-{index}", cpu="32", memory="128Gi", pods="250"))
        core.create_namespace(emulator.namespace_body("herder-system"))
        core.create_namespace(emulator.namespace_body("bench"))

        async def preload() -> None:
            for index in range(pods):
                body = _pod(index, "bench")
                server.emulator.objects[(emulator.PODS, "bench", body["metadata"]["name"])] = body

        server.call(preload, timeout=SETTLE_TIMEOUT)

        began = time.monotonic()
        replica, options = emulator.HerderReplica, emulator.replica_options
        first = replica(server, options("bench-0", rest_port=None)).start(timeout=SETTLE_TIMEOUT)
        sync_seconds = time.monotonic() - began
        bind_seconds = _wait(lambda: len(server.bindings()) >= pods, f"{pods} bindings")
        operator = first.operator
        assert operator is not None
        latency = operator.metrics.bind_latency
        p50, p99 = latency.quantile(0.5), latency.quantile(0.99)
        first.stop()

        bindings_before = len(server.bindings())
        began = time.monotonic()
        second = replica(server, options("bench-1", rest_port=None)).start(timeout=SETTLE_TIMEOUT)
        recovery_seconds = time.monotonic() - began
        recovered = second.scheduler.queue_document("root")
        second.stop()
        rebinds = len(server.bindings()) - bindings_before

    return {
        "nodes": nodes,
        "pods": pods,
        "startup_sync_seconds": round(sync_seconds, 2),
        "bind_all_seconds": round(bind_seconds, 2),
        "pods_bound_per_second": round(pods / bind_seconds, 1) if bind_seconds else float("inf"),
        "bind_latency_p50_ms": round(p50 * 1000, 1),
        "bind_latency_p99_ms": round(p99 * 1000, 1),
        "restart_recovery_seconds": round(recovery_seconds, 2),
        "recovered_vcore": (recovered or {}).get("allocatedResource", {}).get("vcore", 0),
        "bindings_after_restart": rebinds,
        "memory_mib": round(_maxrss_mib() - memory_before),
    }
