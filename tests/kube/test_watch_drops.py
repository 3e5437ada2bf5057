"""Watches stay fresh while every connection to the API server is cut every few seconds.

Herder runs (the real operator: kopf, its own reflectors, the binder) against the emulator
through `FlakyProxy`, which aborts every open connection at random moments (`HERDER_DROPS_EVERY`
seconds apart, "0.5-2" here). Round after round a pod that only a new node can take is
created, then, after a quiet spell, that node; meanwhile small pods come and go. Every node
added must be used (its pod bound there) soon after it appears, no pod may be bound twice or
lost, and at the end Herder's view must be the server's. The suite runs it for
`HERDER_DROPS_SECONDS` (20); `herder bench --watch-drops 180` runs it for three minutes with cuts
every 2-8 s and reports the figures (written to `HERDER_DROPS_REPORT`).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from tests.kube.conftest import QUEUES, eventually, herder_pod
from tests.kube.emulator import (
    HERDER_NAMESPACE,
    EmulatorServer,
    HerderReplica,
    namespace_body,
    node_body,
    replica_options,
)
from tests.kube.flaky_proxy import FlakyProxy

SECONDS = float(os.environ.get("HERDER_DROPS_SECONDS", "20"))
EVERY = tuple(float(part) for part in os.environ.get("HERDER_DROPS_EVERY", "0.5-2").split("-"))
QUIET = tuple(float(part) for part in os.environ.get("HERDER_DROPS_QUIET", "3-6").split("-"))
REPORT = os.environ.get("HERDER_DROPS_REPORT")
NAMESPACE = "batch"

pytestmark = pytest.mark.timeout(SECONDS + 300)


def bound(core: client.CoreV1Api, name: str) -> str | None:
    node: str | None = core.read_namespaced_pod(name, NAMESPACE).spec.node_name
    return node


def test_nodes_added_are_used_soon_and_no_pod_is_bound_twice_or_lost_while_connections_are_cut() -> None:
    rounds = random.Random(9)
    with EmulatorServer() as server, FlakyProxy(server.url, every=(EVERY[0], EVERY[1])) as proxy:
        core = client.CoreV1Api(server.api_client())  # the test's own view: straight to the emulator
        for index in range(2):
            core.create_node(node_body(f"base-{index}", cpu="4", memory="16Gi"))
        core.create_namespace(namespace_body(HERDER_NAMESPACE))
        configmap = {"metadata": {"name": "herder-config"}, "data": {"queues.yaml": yaml.safe_dump(QUEUES)}}
        core.create_namespaced_config_map(HERDER_NAMESPACE, configmap)
        core.create_namespace(namespace_body(NAMESPACE))
        replica = HerderReplica(server, replica_options("herder-0"), api_url=proxy.url).start(timeout=60)
        latencies: list[float] = []
        kept: list[str] = []  # pods that must end bound
        deleted: list[str] = []
        small = 0
        began = time.monotonic()
        try:
            step = 0
            while time.monotonic() - began < SECONDS or step < 2:
                wants = f"wants-{step}"
                core.create_namespaced_pod(NAMESPACE, {**herder_pod(wants, cpu="1"), "spec": _on_pool(step)})
                kept.append(wants)
                for _ in range(3):  # small pods come, the oldest bound ones go
                    name = f"small-{small}"
                    small += 1
                    core.create_namespaced_pod(NAMESPACE, herder_pod(name, cpu="100m"))
                    kept.append(name)
                for name in [n for n in kept if n.startswith("small-")][:-9]:
                    if bound(core, name):
                        core.delete_namespaced_pod(name, NAMESPACE)
                        kept.remove(name)
                        deleted.append(name)
                time.sleep(rounds.uniform(*QUIET))  # a quiet spell for the node watch, cut meanwhile
                added = time.monotonic()
                core.create_node(node_body(f"node-{step}", cpu="2", memory="4Gi", pool=f"pool-{step}"))
                node = eventually(lambda name=wants: bound(core, name), f"{wants} on its new node", timeout=60)
                latencies.append(time.monotonic() - added)
                assert node == f"node-{step}"
                step += 1
            proxy.pause()
            placed = eventually(lambda: all_bound(core, kept), "every pod kept to be bound", timeout=120)
            successes = Counter(b.name for b in server.bindings() if b.code == 201)
            doubly = sorted(name for name, count in successes.items() if count > 1)
            lost = sorted(set(kept) - set(placed))

            def view_agrees() -> bool:
                for name, node in placed.items():
                    uid = core.read_namespaced_pod(name, NAMESPACE).metadata.uid
                    allocation = replica.scheduler.allocation(uid)
                    if allocation is None or allocation.node_id != node:
                        return False
                return True

            eventually(view_agrees, "Herder's view of every pod to be the server's", timeout=60)
            restarts = replica.operator.metrics.watch_restarts() if replica.operator is not None else {}
        finally:
            replica.stop()
        figures: dict[str, Any] = {
            "seconds": round(time.monotonic() - began, 1),
            "cut_every_seconds": f"{EVERY[0]:g}-{EVERY[1]:g}",
            "cuts": proxy.cuts,
            "connections_cut": proxy.connections_cut,
            "nodes_added": len(latencies),
            "node_used_after_p50_seconds": round(statistics.median(latencies), 2),
            "node_used_after_max_seconds": round(max(latencies), 2),
            "pods": len(kept) + len(deleted),
            "pods_deleted": len(deleted),
            "double_binds": len(doubly),
            "lost_pods": len(lost),
            "watch_restarts": {f"{kind}/{reason}": count for (kind, reason), count in sorted(restarts.items())},
        }
        if REPORT:
            Path(REPORT).write_text(json.dumps(figures, indent=2))
    assert proxy.cuts >= 2, "the connections were cut"
    assert doubly == [] and lost == [], figures


def _on_pool(step: int) -> dict[str, Any]:
    spec: dict[str, Any] = herder_pod("x", cpu="1")["spec"]
    spec["nodeSelector"] = {"pool": f"pool-{step}"}
    return spec


def all_bound(core: client.CoreV1Api, names: list[str]) -> dict[str, str] | None:
    nodes = {p.metadata.name: p.spec.node_name for p in core.list_namespaced_pod(NAMESPACE).items}
    placed = {name: nodes[name] for name in names if nodes.get(name)}
    return placed if len(placed) == len(names) else None
