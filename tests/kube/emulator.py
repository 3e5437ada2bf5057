"""The emulated cluster the shim's integration tests and the e2e suite run against.

`EmulatorServer` runs `HerderEmulator` (tests/kube/emulator_api.py) over HTTP in its own thread
and event loop, so the real `kubernetes` client and kopf talk to it exactly as to an API server.
`HerderReplica` runs one `herder run` operator in-process in its own thread (kopf must not share
the emulator's loop). `running_herder()` puts both together and yields the e2e suite's
`e2e.backends.Cluster`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import kmock
from kubernetes import client

from core.scheduler import Scheduler
from shim.kube.operator import HerderOperator, OperatorOptions
from shim.kube.watch.reload import ConfigSource
from tests.kube.emulator_api import NAMESPACES, NODES, PODS, BindingFaults, BindingRecord, HerderEmulator

T = TypeVar("T")
HERDER_NAMESPACE = "herder-system"


class EmulatorServer:
    """kmock's emulator on a local port, driven from synchronous test code."""

    def __init__(self, faults: BindingFaults | None = None, autoscaling: bool = False) -> None:
        self.emulator = HerderEmulator(faults=faults or BindingFaults(), autoscaling=autoscaling)
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._serve, name="kmock-emulator", daemon=True)
        self.url = ""

    def __enter__(self) -> EmulatorServer:
        self._thread.start()
        if not self._started.wait(timeout=30):
            raise RuntimeError("the emulator did not start within 30s")
        return self

    def __exit__(self, *_: object) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=30)

    def _serve(self) -> None:
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        async with self.emulator, kmock.Server(self.emulator) as server:
            self.url = str(server.url).rstrip("/")
            self._started.set()
            await self._stop.wait()

    def call(self, make: Callable[[], Coroutine[Any, Any, T]], timeout: float = 30) -> T:
        """Run a coroutine on the emulator's loop (its state is only touched from there)."""
        return asyncio.run_coroutine_threadsafe(make(), self._loop).result(timeout)

    def api_client(self, token: str | None = None) -> client.ApiClient:
        config = client.Configuration()
        config.host = self.url
        if token:
            config.api_key = {"authorization": token}
            config.api_key_prefix = {"authorization": "Bearer"}
        return client.ApiClient(config)

    # -- reading the emulator's state (a consistent copy, taken on its loop) -----------------
    def objects(self, resource: Any) -> list[dict[str, Any]]:
        async def read() -> list[dict[str, Any]]:
            return [
                dict(stored.raw)
                for key, stored in list(self.emulator.objects.items())
                if key[0] == resource and not stored.deleted
            ]

        return self.call(read)

    def bindings(self) -> list[BindingRecord]:
        async def read() -> list[BindingRecord]:
            return list(self.emulator.bindings)

        return self.call(read)

    def writes(self) -> list[tuple[str, str, str]]:
        """(method, path, user agent) of every request that is not a read, in arrival order."""

        async def read() -> list[tuple[str, str, str]]:
            return list(self.emulator.audit)

        return self.call(read)

    def accepted_writes(self, since: int = 0) -> list[tuple[str, str, str]]:
        """`writes()[since:]` without those the server answered with an error (a 409 on a stale
        resourceVersion, say): what changed something."""

        async def read() -> list[tuple[str, str, str]]:
            audit, refused = self.emulator.audit, self.emulator.refused
            return [write for index, write in enumerate(audit) if index >= since and index not in refused]

        return self.call(read)

    def install(self, group: str, version: str, plural: str, kind: str, subresources: tuple[str, ...] = ()) -> None:
        """Serve a namespaced custom kind, as installing its CRD does (discovery shows it from now on)."""

        async def declare() -> None:
            self.emulator.resources[kmock.resource(group, version, plural)] = kmock.ResourceInfo(
                kind=kind,
                namespaced=True,
                verbs=["get", "list", "watch", "create", "patch", "update", "delete"],
                subresources=list(subresources),
            )

        self.call(declare)

    def protect(self, namespace: str, pod: str) -> None:
        """A PodDisruptionBudget now refuses evicting this pod (429)."""

        async def mark() -> None:
            self.emulator.protected.add((namespace, pod))

        self.call(mark)

    def set_fault_rate(self, rate: float, kinds: tuple[str, ...] | None = None) -> None:
        """This share of bindings fails; `kinds` among "error", "timeout-applied", "timeout-lost"."""

        async def change() -> None:
            self.emulator.faults.rate = rate
            if kinds is not None:
                self.emulator.faults.kinds = kinds

        self.call(change)

    def set_lost_binding_rate(self, rate: float, delay: float = 1.5) -> None:
        """This share of committed bindings loses its response (dropped, or held `delay` s)."""

        async def change() -> None:
            self.emulator.faults.lost_rate = rate
            self.emulator.faults.delay = delay

        self.call(change)

    def set_load(self, slow_rate: float, slow_min: float, slow_max: float, error_rate: float) -> None:
        """Answer `slow_rate` of requests [slow_min, slow_max] s late and `error_rate` with 500/429."""

        async def change() -> None:
            load = self.emulator.load
            load.slow_rate, load.slow_min, load.slow_max, load.error_rate = slow_rate, slow_min, slow_max, error_rate

        self.call(change)


class HerderReplica:
    """One `herder run` in-process: the real operator (kopf, threads, REST) in its own thread."""

    def __init__(self, server: EmulatorServer, options: OperatorOptions, api_url: str | None = None) -> None:
        self.server = server
        self.options = options
        self.api_url = api_url  # another way to the emulator (a proxy in front of it), when given
        self.identity = options.identity
        self.operator: HerderOperator | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"replica-{self.identity}", daemon=True)

    def start(self, timeout: float = 30) -> HerderReplica:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._error is None:
            if self._ready.is_set() and self.operator is not None and self.operator.status.synced:
                return self
            time.sleep(0.02)
        raise RuntimeError(f"replica {self.identity} did not start: {self._error!r}")

    def _run(self) -> None:
        try:
            api_client = self.server.api_client()
            if self.api_url is not None:
                api_client.configuration.host = self.api_url
            self.operator = HerderOperator(api_client, self.options)
            self.operator.run(self._stop, self._ready)
        except BaseException as error:  # reported by start(), which is waiting for it
            self._error = error

    @property
    def leading(self) -> bool:
        return self.operator is not None and self.operator.leadership.leading

    @property
    def scheduler(self) -> Scheduler:
        assert self.operator is not None
        return self.operator.scheduler

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM: step down, release the Lease, finish bindings."""
        self._stop.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise RuntimeError(f"replica {self.identity} did not stop within {timeout}s")

    def kill(self, timeout: float = 60) -> None:
        """SIGKILL: from now on it writes nothing and keeps the Lease until it expires."""
        if self.operator is not None:
            self.operator.kill()
        self.stop(timeout)


def replica_options(identity: str, namespace: str = HERDER_NAMESPACE, **changes: Any) -> OperatorOptions:
    """Operator options for in-process replicas: short timeouts, loopback REST on a free port."""
    base = OperatorOptions(
        source=ConfigSource(namespace=namespace),
        identity=identity,
        bind_timeout=1.0,
        housekeeping_interval=0.2,
        rest_port=0,
        rest_host="127.0.0.1",
    )
    return dataclasses.replace(base, **changes)


def node_body(name: str, cpu: str = "8", memory: str = "32Gi", pods: str = "110", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
        "spec": {},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
            "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def namespace_body(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": annotations or {}}}


__all__ = [
    "HERDER_NAMESPACE",
    "NAMESPACES",
    "NODES",
    "PODS",
    "BindingFaults",
    "EmulatorServer",
    "namespace_body",
    "node_body",
    "replica_options",
    "running_herder",
]


def running_herder(replicas: int = 2) -> Any:
    """The e2e suite's entry point (e2e/backends.py): Herder installed and running on the emulator."""
    from tests.kube.herder_cluster import running_herder as run

    return run(replicas)
