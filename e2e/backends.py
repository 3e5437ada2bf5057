"""Where the e2e suite runs: a real cluster from KUBECONFIG (kind in CI) or the in-process API emulator.

Both give the suite the same handle: API clients, the Herder REST base URL, and the operator
controls that restart and failover tests need. The suite never knows which one it has.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kubernetes import client, config

ROOT = Path(__file__).resolve().parents[1]
LEASE_NAME = "herder-scheduler"


class Operator(Protocol):
    """The controls over the running Herder replicas that the suite needs."""

    def leader(self) -> str: ...

    def stop_leader(self) -> None: ...

    def restart_all(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Cluster:
    core: client.CoreV1Api
    apps: client.AppsV1Api
    custom: client.CustomObjectsApi
    coordination: client.CoordinationV1Api
    herder_url: str
    herder_namespace: str
    operator: Operator


def wait_until_ready(url: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"Herder at {url} did not become ready within {timeout:.0f}s")


class KubeconfigOperator:
    """Herder installed by the Helm chart: replicas are pods of its Deployment."""

    def __init__(
        self, core: client.CoreV1Api, coordination: client.CoordinationV1Api, namespace: str
    ) -> None:
        self._core = core
        self._coordination = coordination
        self._namespace = namespace

    def leader(self) -> str:
        lease = self._coordination.read_namespaced_lease(LEASE_NAME, self._namespace)
        return str(lease.spec.holder_identity or "")

    def stop_leader(self) -> None:
        holder = self.leader()
        pod = next(p for p in self._pods() if holder.startswith(p.metadata.name))
        self._core.delete_namespaced_pod(pod.metadata.name, self._namespace, grace_period_seconds=0)

    def restart_all(self) -> None:
        for pod in self._pods():
            self._core.delete_namespaced_pod(pod.metadata.name, self._namespace, grace_period_seconds=0)

    def _pods(self) -> list[client.V1Pod]:
        selector = "app.kubernetes.io/name=herder"
        return list(self._core.list_namespaced_pod(self._namespace, label_selector=selector).items)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _port_forward(namespace: str) -> Iterator[str]:
    kubectl = ROOT / ".tools" / "bin" / "kubectl"
    port = _free_port()
    service = f"svc/{os.environ.get('HERDER_RELEASE', 'herder')}"
    process = subprocess.Popen(
        [str(kubectl), "-n", namespace, "port-forward", service, f"{port}:9080"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextmanager
def kubeconfig_cluster() -> Iterator[Cluster]:
    """A real cluster: KUBECONFIG for the API, HERDER_URL or a port-forward for REST."""
    config.load_kube_config()
    namespace = os.environ.get("HERDER_NAMESPACE", "herder-system")
    core, coordination = client.CoreV1Api(), client.CoordinationV1Api()
    operator = KubeconfigOperator(core, coordination, namespace)
    with _rest_url(namespace) as url:
        wait_until_ready(url)
        yield Cluster(core, client.AppsV1Api(), client.CustomObjectsApi(), coordination, url, namespace, operator)


@contextmanager
def _rest_url(namespace: str) -> Iterator[str]:
    if url := os.environ.get("HERDER_URL"):
        yield url.rstrip("/")
    else:
        with _port_forward(namespace) as forwarded:
            yield forwarded


@contextmanager
def emulator_cluster() -> Iterator[Cluster]:
    """The kmock emulator with the operator started in-process (tests/kube's fixture layer)."""
    try:
        from tests.kube import emulator  # type: ignore[import-not-found]
    except ImportError as error:
        raise RuntimeError(
            "e2e on the emulator needs tests/kube/emulator.py (the shim's emulator fixture) and the "
            "`herder run` entry point from shim/kube; neither has landed. Set KUBECONFIG to run on a cluster."
        ) from error
    with emulator.running_herder() as cluster:
        yield cluster


def select_backend() -> str:
    return os.environ.get("HERDER_E2E_BACKEND") or (
        "kubeconfig" if os.environ.get("KUBECONFIG") else "emulator"
    )
