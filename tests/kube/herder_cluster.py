"""Herder installed on the emulated cluster, as the Helm chart installs it on a real one.

Two replicas (Lease election, shortened timings), Herder's namespace with the scheduler
ConfigMap (e2e/queues.yaml), nodes, the admission webhooks registered with the emulated API
server, and two "Services" (small HTTP proxies on the emulator's loop) in front of the
replicas: REST (to the leader when there is one, else any ready replica) and webhooks (any
live replica). `EmulatorOperator` gives the e2e suite the controls the chart's Deployment gives
on a real cluster: who leads, kill the leader (a replacement starts, as the Deployment would
create one), restart everything.
"""

from __future__ import annotations

import itertools
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import aiohttp.web
from kubernetes import client

from e2e.backends import Cluster
from shim.kube.watch.reload import ConfigSource
from tests.kube.emulator import (
    HERDER_NAMESPACE,
    EmulatorServer,
    HerderReplica,
    namespace_body,
    node_body,
    replica_options,
)
from tests.kube.emulator_admission import WebhookRoute
from tests.kube.emulator_api import PODS, QUOTAS
from tests.kube.storage_controller import DEFAULT_CLASS, StorageController
from tests.kube.workload_controller import CONTROLLER_TOKEN, CONTROLLER_USER, DeploymentController

ROOT = Path(__file__).resolve().parents[2]
QUEUES = ROOT / "e2e" / "queues.yaml"
LEASE = "herder-scheduler"
FAST_LEASE = {"leader.leaseDuration": "3s", "leader.renewDeadline": "2s", "leader.retryPeriod": "0.3s"}
USER_TOKEN = "e2e-user-token"
USER = {"username": "e2e-user@example.com", "groups": ["e2e-team", "system:authenticated"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServiceProxy:
    """A Service in front of replicas: forwards each request to the first target `targets()` names."""

    def __init__(self, server: EmulatorServer, targets: Callable[[], list[str]]) -> None:
        self._server = server
        self._targets = targets
        self._runner: aiohttp.web.AppRunner | None = None
        self.url = ""

    def start(self) -> ServiceProxy:
        async def open_proxy() -> str:
            app = aiohttp.web.Application()
            app.router.add_route("*", "/{tail:.*}", self._forward)
            self._runner = aiohttp.web.AppRunner(app, access_log=None)
            await self._runner.setup()
            port = free_port()
            await aiohttp.web.TCPSite(self._runner, "127.0.0.1", port).start()
            return f"http://127.0.0.1:{port}"

        self.url = self._server.call(open_proxy)
        return self

    def stop(self) -> None:
        if self._runner is not None:
            runner = self._runner
            self._server.call(runner.cleanup)

    async def _forward(self, request: aiohttp.web.Request) -> aiohttp.web.StreamResponse:
        targets = self._targets()
        if not targets:
            return aiohttp.web.Response(status=503, text="no replica is serving")
        body = await request.read()
        try:
            async with (
                aiohttp.ClientSession() as session,
                session.request(
                    request.method,
                    f"{targets[0]}{request.path_qs}",
                    data=body,
                    headers={"Content-Type": request.headers.get("Content-Type", "application/json")},
                    timeout=aiohttp.ClientTimeout(total=30),
                ) as answer,
            ):
                payload = await answer.read()
                kind = answer.headers.get("Content-Type", "application/json")
                return aiohttp.web.Response(status=answer.status, body=payload, headers={"Content-Type": kind})
        except (aiohttp.ClientError, TimeoutError) as error:
            return aiohttp.web.Response(status=502, text=f"replica unreachable: {error}")


class EmulatorOperator:
    """`e2e.backends.Operator` for in-process replicas."""

    def __init__(self, server: EmulatorServer, replicas: int = 2) -> None:
        self._server = server
        self._count = replicas
        self._names = (f"herder-{index}" for index in itertools.count())
        self._lock = threading.Lock()
        self.replicas: list[HerderReplica] = []

    # -- the Operator protocol ---------------------------------------------------------------
    def leader(self) -> str:
        api = client.CoordinationV1Api(self._server.api_client())
        try:
            lease = api.read_namespaced_lease(LEASE, HERDER_NAMESPACE)
        except client.ApiException:
            return ""
        return str(lease.spec.holder_identity or "")

    def stop_leader(self) -> None:
        """The leader's pod is deleted with no grace period: it dies, the Deployment starts another."""
        holder = self.leader()
        with self._lock:
            doomed = [r for r in self.replicas if r.identity == holder]
            self.replicas = [r for r in self.replicas if r.identity != holder]
        for replica in doomed:
            replica.kill()
        self.start_missing()

    def restart_all(self) -> None:
        with self._lock:
            doomed, self.replicas = self.replicas, []
        for replica in doomed:
            replica.kill()
        self.start_missing()

    # -- harness -----------------------------------------------------------------------------
    def start_missing(self) -> None:
        while True:
            with self._lock:
                if len(self.replicas) >= self._count:
                    return
            replica = HerderReplica(self._server, self._options(next(self._names))).start()
            with self._lock:
                self.replicas.append(replica)

    def stop_all(self) -> None:
        with self._lock:
            doomed, self.replicas = self.replicas, []
        for replica in doomed:
            replica.stop()

    def _options(self, identity: str) -> Any:
        return replica_options(
            identity,
            source=ConfigSource(namespace=HERDER_NAMESPACE, overrides=FAST_LEASE),
            webhook_port=free_port(),
            webhook_insecure=True,
            webhook_addr="127.0.0.1",
        )

    def _live(self) -> list[HerderReplica]:
        with self._lock:
            return [r for r in self.replicas if r.operator is not None and r.operator.alive]

    def rest_targets(self) -> list[str]:
        ready = [
            r for r in self._live() if r.operator is not None and r.operator.status.synced and r.operator.rest_port
        ]
        ready.sort(key=lambda r: not r.leading)
        return [f"http://127.0.0.1:{r.operator.rest_port}" for r in ready if r.operator is not None]

    def webhook_targets(self) -> list[str]:
        return [
            f"http://127.0.0.1:{r.options.webhook_port}"
            for r in self._live()
            if r.operator is not None and r.operator.status.synced
        ]


def install(server: EmulatorServer, nodes: int = 4) -> None:
    """What `helm install` and a kind cluster leave behind: nodes, namespace, ConfigMap, users."""
    core = client.CoreV1Api(server.api_client())
    for index in range(nodes):
        core.create_node(node_body(f"worker-{index}", cpu="8", memory="32Gi"))
    client.StorageV1Api(server.api_client()).create_storage_class(DEFAULT_CLASS)  # kind's default class
    core.create_namespace(namespace_body(HERDER_NAMESPACE))
    core.create_namespaced_config_map(
        HERDER_NAMESPACE,
        {
            "metadata": {"name": "herder-config", "namespace": HERDER_NAMESPACE},
            "data": {"queues.yaml": QUEUES.read_text()},
        },
    )

    async def register() -> None:
        server.emulator.users[USER_TOKEN] = USER
        server.emulator.users[CONTROLLER_TOKEN] = CONTROLLER_USER
        server.emulator.webhooks = [
            WebhookRoute("mutate-pod", PODS, "Pod", ("CREATE", "UPDATE"), mutating=True),
            WebhookRoute(
                "validate-elasticquota", QUOTAS, "ElasticQuota", ("CREATE", "UPDATE", "DELETE"), mutating=False
            ),
        ]

    server.call(register)


@contextmanager
def running_herder(replicas: int = 2) -> Iterator[Cluster]:
    """The emulator with Herder installed and running; yields the e2e suite's Cluster handle."""
    with EmulatorServer() as server:
        install(server)
        operator = EmulatorOperator(server, replicas)
        rest = ServiceProxy(server, operator.rest_targets).start()
        webhooks = ServiceProxy(server, operator.webhook_targets).start()

        async def route_webhooks() -> None:
            server.emulator.webhook_url = webhooks.url

        server.call(route_webhooks)
        operator.start_missing()
        controller = DeploymentController(server.api_client(token=CONTROLLER_TOKEN)).start()
        storage = StorageController(server.api_client(token=CONTROLLER_TOKEN)).start()
        api = server.api_client(token=USER_TOKEN)
        try:
            yield Cluster(
                core=client.CoreV1Api(api),
                apps=client.AppsV1Api(api),
                custom=client.CustomObjectsApi(api),
                coordination=client.CoordinationV1Api(api),
                herder_url=rest.url,
                herder_namespace=HERDER_NAMESPACE,
                operator=operator,
            )
        finally:
            storage.stop()
            controller.stop()
            operator.stop_all()
            webhooks.stop()
            rest.stop()
