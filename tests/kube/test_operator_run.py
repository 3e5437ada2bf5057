"""`herder run` from a kubeconfig, as on a laptop: it schedules, says what it does, and stops cleanly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from kubernetes import client

from shim.bench.restart import write_kubeconfig
from tests.kube.conftest import Cluster, herder_pod
from tests.kube.emulator import HERDER_NAMESPACE

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[2]


def kubeconfig(path: Path, server: str, namespace: str = HERDER_NAMESPACE) -> Path:
    return write_kubeconfig(path, server, namespace, token="admin-token")


def herder(*args: str, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "shim.cli", "run", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )


def test_run_from_a_kubeconfig_binds_pods_and_hands_the_lease_back_on_sigterm(cluster: Cluster, tmp_path: Path) -> None:
    config = kubeconfig(tmp_path / "kubeconfig", cluster.server.url)
    log = tmp_path / "herder.log"
    process = herder("--kubeconfig", str(config), "--identity", "laptop", "--rest-port", "0", log=log)
    try:
        cluster.create_namespace("team")
        cluster.core.create_namespaced_pod("team", herder_pod("first"))
        cluster.bound("team", "first", timeout=30)
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
    output = log.read_text()
    assert code == 0, output
    assert "synced 3 nodes" in output
    assert "laptop became the leader" in output
    assert "laptop released the Lease" in output
    lease = client.CoordinationV1Api(cluster.server.api_client()).read_namespaced_lease(
        "herder-scheduler", HERDER_NAMESPACE
    )
    assert not lease.spec.holder_identity


def test_invalid_configmap_at_start_is_an_error_naming_the_problem(cluster: Cluster, tmp_path: Path) -> None:
    cluster.set_config({"queues.yaml": "partitions: [{name: default, queues: [{name: root, bogus: 1}]}]"})
    config = kubeconfig(tmp_path / "kubeconfig", cluster.server.url)
    log = tmp_path / "herder.log"
    process = herder("--kubeconfig", str(config), log=log)
    assert process.wait(timeout=30) == 1
    output = log.read_text()
    assert "herder-system/herder-config is invalid" in output
    assert "bogus" in output


def test_unknown_set_option_is_a_usage_error(cluster: Cluster, tmp_path: Path) -> None:
    config = kubeconfig(tmp_path / "kubeconfig", cluster.server.url)
    log = tmp_path / "herder.log"
    process = herder("--kubeconfig", str(config), "--set", "quota.recycle.dealy=5s", log=log)
    assert process.wait(timeout=30) == 2
    assert "quota.recycle.dealy: unknown setting" in log.read_text()


def test_webhook_port_without_a_certificate_is_a_usage_error(cluster: Cluster, tmp_path: Path) -> None:
    config = kubeconfig(tmp_path / "kubeconfig", cluster.server.url)
    log = tmp_path / "herder.log"
    process = herder("--kubeconfig", str(config), "--webhook-port", "9443", log=log)
    assert process.wait(timeout=30) == 2
    assert "--webhook-cert-dir" in log.read_text()


def test_unreachable_kubeconfig_is_one_clear_line(tmp_path: Path) -> None:
    log = tmp_path / "herder.log"
    process = herder("--kubeconfig", str(tmp_path / "missing"), log=log)
    assert process.wait(timeout=30) == 1
    assert "cannot load kubeconfig" in log.read_text()
    assert "Traceback" not in log.read_text()


def test_a_taken_rest_port_stops_start_up_with_a_clear_message(cluster: Cluster, tmp_path: Path) -> None:
    config = kubeconfig(tmp_path / "kubeconfig", cluster.server.url)
    log = tmp_path / "herder.log"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cluster.create_namespace("team")
        cluster.core.create_namespaced_pod("team", herder_pod("waiting"))
        process = herder("--kubeconfig", str(config), "--rest-address", "127.0.0.1", "--rest-port", str(port), log=log)
        assert process.wait(timeout=30) == 1
    output = log.read_text()
    assert f"cannot serve the REST API on 127.0.0.1:{port}" in output
    assert "Traceback" not in output
    assert "became the leader" not in output  # it never ran without its REST API
    assert not cluster.core.read_namespaced_pod("waiting", "team").spec.node_name


def test_a_taken_rest_port_fails_before_the_api_server_is_asked_anything(tmp_path: Path) -> None:
    """The REST port is bound first of all: with an API server that never answers (the ConfigMap
    read would wait for it), a taken port is still one clear line and exit code 1 at once."""
    with socket.socket() as silent, socket.socket() as taken:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # connections are accepted by the kernel, never answered
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{silent.getsockname()[1]}")
        log = tmp_path / "herder.log"
        process = herder("--kubeconfig", str(config), "--rest-address", "127.0.0.1", "--rest-port", str(port), log=log)
        try:
            code = process.wait(timeout=20)
        finally:
            process.kill()
    output = log.read_text()
    assert code == 1, output
    assert f"cannot serve the REST API on 127.0.0.1:{port}: Address already in use" in output
    assert "Traceback" not in output and "connecting to" not in output


def test_the_rest_token_file_guards_the_api_of_a_running_replica(cluster: Cluster, tmp_path: Path) -> None:
    config = kubeconfig(tmp_path / "kubeconfig", cluster.server.url)
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    log = tmp_path / "herder.log"
    args = ("--kubeconfig", str(config), "--rest-address", "127.0.0.1", "--rest-port", str(port))
    process = herder(*args, "--rest-token-file", str(token), log=log)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=2).read()
                break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/ws/v1/partitions", timeout=5)
        assert refused.value.code == 401
        allowed = urllib.request.Request(f"{base}/ws/v1/partitions", headers={"Authorization": "Bearer s3cret"})
        assert urllib.request.urlopen(allowed, timeout=5).status == 200
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def test_a_taken_webhook_port_stops_start_up_before_anything_runs(cluster: Cluster) -> None:
    from shim.kube.operator import HerderOperator, StartupError
    from tests.kube.emulator import replica_options

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        options = replica_options("herder-w", webhook_port=port, webhook_insecure=True, webhook_addr="127.0.0.1")
        operator = HerderOperator(cluster.server.api_client(), options)
        with pytest.raises(StartupError, match=f"cannot listen for admission webhooks on port {port}"):
            operator.run(threading.Event())
    assert operator.rest_port is None  # nothing was started
