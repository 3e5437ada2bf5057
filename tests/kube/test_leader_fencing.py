"""Leader fencing: a leader paused past its Lease (SIGSTOP) writes nothing once another replica leads.

Two real `herder run` processes against the emulator. The leader sees pods it cannot place yet,
is frozen, a node that fits them arrives, the standby takes the expired Lease and binds them.
When the old leader wakes, its watch delivers the node and its cycle would place the same
pods: fencing (leader/loops.py) must stop every binding, eviction and status write it would
send. The emulator records every write with its User-Agent, which names the replica.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from kubernetes import client

from tests.kube.conftest import Cluster, eventually, herder_pod
from tests.kube.emulator import HERDER_NAMESPACE, node_body
from tests.kube.test_operator_run import herder, kubeconfig

pytestmark = pytest.mark.timeout(240)

START_UP = 90.0  # a process importing kopf and the client starts slowly on a loaded 2-core machine

FAST_LEASE = ("leader.leaseDuration=3s", "leader.renewDeadline=2s", "leader.retryPeriod=0.3s", "status.interval=0.2s")


def holder(cluster: Cluster) -> str | None:
    api = client.CoordinationV1Api(cluster.server.api_client())
    try:
        return api.read_namespaced_lease("herder-scheduler", HERDER_NAMESPACE).spec.holder_identity or None
    except client.ApiException:
        return None


def replica(cluster: Cluster, tmp_path: Path, identity: str) -> tuple[subprocess.Popen[bytes], Path]:
    config = kubeconfig(tmp_path / f"{identity}.kubeconfig", cluster.server.url)
    log = tmp_path / f"{identity}.log"
    sets = [arg for setting in FAST_LEASE for arg in ("--set", setting)]
    return herder("--kubeconfig", str(config), "--identity", identity, "--rest-port", "0", *sets, log=log), log


def test_a_leader_paused_past_its_lease_writes_nothing_after_the_standby_takes_over(
    cluster: Cluster, tmp_path: Path
) -> None:
    leader, leader_log = replica(cluster, tmp_path, "herder-a")
    standby: subprocess.Popen[bytes] | None = None
    try:
        eventually(lambda: holder(cluster) == "herder-a", "herder-a to lead", START_UP)
        standby, standby_log = replica(cluster, tmp_path, "herder-b")
        eventually(lambda: "synced" in standby_log.read_text(), "herder-b to load the cluster", START_UP)
        cluster.create_namespace("batch")
        for index in range(3):
            cluster.core.create_namespaced_pod("batch", herder_pod(f"big-{index}", cpu="6"))  # no node fits yet

        def seen_by_leader() -> bool:
            pods = cluster.core.list_namespaced_pod("batch").items
            return all(
                any(c.type == "PodScheduled" and c.status == "False" for c in (p.status.conditions or [])) for p in pods
            )

        eventually(seen_by_leader, "herder-a to report the pods as waiting")

        leader.send_signal(signal.SIGSTOP)
        cluster.core.create_node(node_body("big", cpu="32", memory="64Gi"))
        eventually(lambda: holder(cluster) == "herder-b", "herder-b to take the expired Lease")
        taken_over = len(cluster.server.writes())
        cluster.all_bound("batch")
        bound_by = {b.name: b for b in cluster.server.bindings() if b.code == 201}

        leader.send_signal(signal.SIGCONT)
        eventually(lambda: "stops scheduling" in leader_log.read_text(), "herder-a to notice it lost the Lease")
        time.sleep(1.0)  # let anything the woken leader had queued reach the emulator
        # A request herder-a had begun before it was stopped may still reach the server: it must
        # be refused (every write carries the resourceVersion it read), never change anything.
        late = [write for write in cluster.server.accepted_writes(taken_over) if "(herder-a)" in write[2]]
        assert late == [], f"herder-a wrote after herder-b took over: {late}"
        assert set(bound_by) == {"big-0", "big-1", "big-2"}
        assert holder(cluster) == "herder-b"
    finally:
        for process in (leader, standby):
            if process is not None:
                process.send_signal(signal.SIGCONT)
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=30)
