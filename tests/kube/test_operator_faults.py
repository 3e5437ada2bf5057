"""An unreliable API server: 20% of bindings fail with 5xx or time out, and every pod still ends up
bound exactly once, where the core thinks it is."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from tests.kube.conftest import Cluster, eventually

pytestmark = pytest.mark.timeout(90)

PODS = 60


def test_every_pod_is_bound_exactly_once_despite_failing_and_slow_bindings(cluster: Cluster) -> None:
    cluster.server.set_fault_rate(0.2)
    herder = cluster.start_herder()
    cluster.create_namespace("batch")
    names = cluster.create_pods("batch", PODS, cpu="100m")
    placed = cluster.all_bound("batch", timeout=60)

    bindings = cluster.server.bindings()
    assert any(b.code >= 500 or b.code == 0 for b in bindings), "faults were injected"
    successes = Counter(b.name for b in bindings if b.code == 201)
    assert set(successes) == set(names)
    assert max(successes.values()) == 1

    def core_agrees() -> bool:
        for name, node in placed.items():
            key = cluster.core.read_namespaced_pod(name, "batch").metadata.uid
            allocation = herder.scheduler.allocation(key)
            if allocation is None or allocation.node_id != node:
                return False
        return True

    eventually(core_agrees, "the core's allocations to match where the pods run")
    root = herder.scheduler.queue_document("root")
    assert root["allocatedResource"]["vcore"] == PODS * 100
    assert root["pendingResource"].get("vcore", 0) == 0


def test_placements_stay_while_their_bindings_time_out_and_are_posted_again(cluster: Cluster) -> None:
    """Every binding times out and its outcome is lost: the binder gives up, the pods are read
    back pending and their bindings posted again to the same nodes after a back-off. The
    placements never come and go (issue 15, point 8), and their application stays Running."""
    cluster.server.set_fault_rate(1.0, kinds=("timeout-lost",))
    herder = cluster.start_herder(settings={"bind.retries": "2"})
    cluster.create_namespace("batch")
    names = cluster.create_pods("batch", 3, cpu="100m", labels={"yunikorn.apache.org/app-id": "three"})
    states: set[str] = set()
    placements: list[dict[str, str]] = []

    def sample() -> None:
        doc = herder.scheduler.application_document("three")
        if doc is not None:
            states.add(doc["applicationState"])
            placements.append({a["allocationKey"]: a["nodeId"] for a in doc.get("allocations", [])})

    def posted_again() -> bool:
        sample()
        tries = Counter(b.name for b in cluster.server.bindings())
        return set(tries) == set(names) and min(tries.values()) > 2  # beyond the binder's own attempts

    eventually(posted_again, "every binding posted again after the binder gave it up", timeout=40)
    cluster.server.set_fault_rate(0.0)
    cluster.all_bound("batch", timeout=60)
    successes = Counter(b.name for b in cluster.server.bindings() if b.code == 201)
    assert set(successes) == set(names) and max(successes.values()) == 1
    doc = herder.scheduler.application_document("three")
    assert doc is not None and len(doc["allocations"]) == 3
    full = [p for p in placements if len(p) == 3]
    assert full and all(p == full[0] for p in placements[placements.index(full[0]) :]), "a placement came and went"
    states.update(entry["applicationState"] for entry in doc["stateLog"])
    assert "Completing" not in states, states


def test_placements_stay_while_the_lease_renewal_is_late_and_bind_once_it_lands(cluster: Cluster) -> None:
    """A slow API server answers a Lease renewal after the renew deadline: fencing lets the
    leader write nothing until one lands. Its placements stay and their bindings are posted
    again; they were rolled back and made again (a slow server's churn)."""
    herder = cluster.start_herder()
    leadership = herder.operator.leadership
    eventually(leadership.may_act, "the Lease")
    fresh = leadership.may_act
    # the renewal turns late between the cycle's placements and their bindings
    leadership.may_act = lambda: fresh() and not threading.current_thread().name.startswith("herder-bind")  # type: ignore[method-assign]
    cluster.create_namespace("batch")
    names = cluster.create_pods("batch", 3, cpu="100m", labels={"yunikorn.apache.org/app-id": "three"})
    placements: list[int] = []

    def placed() -> int:
        doc = herder.scheduler.application_document("three")
        placements.append(len((doc or {}).get("allocations", [])))
        return placements[-1]

    eventually(lambda: placed() == 3, "the pods placed")
    for _ in range(30):  # the back-off runs out and the reposts are refused again, before any request
        placed()
        time.sleep(0.1)
    assert cluster.server.bindings() == [] and leadership.leading
    leadership.may_act = fresh  # type: ignore[method-assign]  # a renewal landed
    cluster.all_bound("batch", timeout=60)
    placed()
    assert min(placements[placements.index(3) :]) == 3, "a placement came and went"
    successes = Counter(b.name for b in cluster.server.bindings() if b.code == 201)
    assert set(successes) == set(names) and max(successes.values()) == 1
