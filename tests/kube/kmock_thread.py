"""kmock's plain KubernetesEmulator on a local port, in its own thread and event loop, so the
synchronous `kubernetes` client (and kopf in another thread) can talk to it over real HTTP.

Reads of the emulator's state run on its loop. Quirks to keep in mind (../shared/reference/
kopf-kmock.md): it assigns no uid or resourceVersion, and every patch is a JSON merge patch.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import kmock
from kubernetes import client

T = TypeVar("T")
VERBS = ["get", "list", "watch", "create", "patch", "delete"]
RESOURCES = {
    "v1/pods": kmock.ResourceInfo(kind="Pod", namespaced=True, verbs=VERBS, subresources=["status"]),
    "v1/namespaces": kmock.ResourceInfo(kind="Namespace", namespaced=False, verbs=VERBS),
    "v1/events": kmock.ResourceInfo(kind="Event", namespaced=True, verbs=VERBS),
    "apps/v1/deployments": kmock.ResourceInfo(kind="Deployment", namespaced=True, verbs=VERBS),
    "scheduling.sigs.k8s.io/v1alpha1/elasticquotas": kmock.ResourceInfo(
        kind="ElasticQuota", namespaced=True, verbs=VERBS, subresources=["status"]
    ),
}


class KmockThread:
    def __init__(self) -> None:
        self.emulator = kmock.KubernetesEmulator()
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._serve, name="kmock", daemon=True)

    def __enter__(self) -> KmockThread:
        self._thread.start()
        if not self._started.wait(30):
            raise RuntimeError("kmock did not start")
        return self

    def __exit__(self, *_: object) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())
        self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        async with self.emulator, kmock.Server(self.emulator) as server:
            for name, info in RESOURCES.items():
                self.emulator.resources[name] = info
            self.url = str(server.url).rstrip("/")
            self._started.set()
            await self._stop.wait()

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(30)

    def api_client(self) -> client.ApiClient:
        config = client.Configuration()
        config.host = self.url
        return client.ApiClient(config)

    def writes(self, path_part: str = "") -> list[tuple[str, str, Any]]:
        """(method, path, body) of every non-read request whose path contains `path_part`."""

        async def read() -> list[tuple[str, str, Any]]:
            return [
                (str(r.method.value), str(r.url.path), r.data)
                for r in list(self.emulator)
                if str(r.method.value) not in ("GET", "HEAD", "OPTIONS") and path_part in str(r.url.path)
            ]

        return self._call(read())

    def objects(self, plural: str) -> list[dict[str, Any]]:
        """The stored objects of one resource (by plural name), as plain dicts."""

        async def read() -> list[dict[str, Any]]:
            return [
                dict(stored.raw)
                for key, stored in list(self.emulator.objects.items())
                if key[0].plural == plural and not stored.deleted
            ]

        return self._call(read())
