"""Listing every node, namespace, ElasticQuota, storage object and pod with the official client, as plain dicts.

Used for the start-up sync (nothing is scheduled before the whole cluster is known) and for
listing again after a watch's resourceVersion expired. Lists are paged (`limit`/`continue`) so
a large cluster is never one huge response, and read as raw JSON: the scheduler works on
dicts, and building the client's model objects for thousands of pods only to turn them back
into dicts would be wasted time.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from kubernetes import client

from shim.kube.kinds import QUOTA_GROUP, QUOTA_PLURAL, QUOTA_VERSION

PAGE = 500


def _page_documents(
    call: Callable[..., Any], *args: Any, timeout: float
) -> Iterator[tuple[list[dict[str, Any]], str | None]]:
    """Each page's items as it arrives, with the listing's resourceVersion on the last page (the
    version to watch from) and None on the others."""
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"limit": PAGE, "_preload_content": False, "_request_timeout": timeout}
        if token:
            kwargs["_continue"] = token
        document = json.loads(call(*args, **kwargs).data)
        meta = document.get("metadata") or {}
        token = meta.get("continue")
        yield document.get("items") or [], None if token else str(meta.get("resourceVersion") or "")
        if not token:
            return


def _pages(call: Callable[..., Any], *args: Any, timeout: float) -> tuple[list[dict[str, Any]], str]:
    """Every item, and the resourceVersion of the listing (its last page) to watch from."""
    items: list[dict[str, Any]] = []
    for page, version in _page_documents(call, *args, timeout=timeout):
        items.extend(page)
        if version is not None:
            return items, version
    return items, ""


class PagedListing:
    """The pages of a listing as they arrive, the next one read (by a thread of its own) while
    the caller works on the current one: the API server prepares a page while Herder converts the
    last. `version` is the listing's resourceVersion once every page was read. A caller that stops
    early (an error while it converts) lets the reading thread end too."""

    def __init__(self, call: Callable[..., Any], timeout: float) -> None:
        self._call = call
        self._timeout = timeout
        self._pages: queue.Queue[tuple[list[dict[str, Any]] | None, BaseException | None]] = queue.Queue(maxsize=2)
        self._abandoned = threading.Event()
        self.version = ""
        self._reader = threading.Thread(target=self._read, name="herder-listing", daemon=True)

    def _hand_over(self, item: tuple[list[dict[str, Any]] | None, BaseException | None]) -> bool:
        while not self._abandoned.is_set():
            try:
                self._pages.put(item, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def _read(self) -> None:
        try:
            for page, version in _page_documents(self._call, timeout=self._timeout):
                if version is not None:
                    self.version = version
                if not self._hand_over((page, None)):
                    return
            self._hand_over((None, None))
        except BaseException as error:  # handed to the caller, which raises it
            self._hand_over((None, error))

    def started(self) -> PagedListing:
        """Begin reading now, before the caller iterates."""
        if self._reader.ident is None:  # not started yet
            self._reader.start()
        return self

    def close(self) -> None:
        """The caller reads no more pages: the reading thread ends."""
        self._abandoned.set()

    def __iter__(self) -> Iterator[list[dict[str, Any]]]:
        self.started()
        try:
            while True:
                page, error = self._pages.get()
                if error is not None:
                    raise error
                if page is None:
                    return
                yield page
        finally:
            self.close()


class ClusterReader:
    def __init__(self, api_client: client.ApiClient, timeout: float = 60.0) -> None:
        self._core = client.CoreV1Api(api_client)
        self._custom = client.CustomObjectsApi(api_client)
        self._storage = client.StorageV1Api(api_client)
        self._timeout = timeout

    def nodes(self) -> list[dict[str, Any]]:
        return self.node_listing()[0]

    def node_listing(self) -> tuple[list[dict[str, Any]], str]:
        """Every node and the resourceVersion to watch nodes from."""
        return _pages(self._core.list_node, timeout=self._timeout)

    def namespaces(self) -> list[dict[str, Any]]:
        return _pages(self._core.list_namespace, timeout=self._timeout)[0]

    def storage_listing(self, plural: str) -> tuple[list[dict[str, Any]], str]:
        """Every StorageClass, PersistentVolume or PersistentVolumeClaim, and the version to watch from."""
        calls: dict[str, Callable[..., Any]] = {
            "storageclasses": self._storage.list_storage_class,
            "persistentvolumes": self._core.list_persistent_volume,
            "persistentvolumeclaims": self._core.list_persistent_volume_claim_for_all_namespaces,
        }
        return _pages(calls[plural], timeout=self._timeout)

    def custom_listing(self, group: str, version: str, plural: str) -> tuple[list[dict[str, Any]], str]:
        """Every object of a served custom kind (a PodGroup API's) and the version to watch from."""
        return _pages(self._custom.list_cluster_custom_object, group, version, plural, timeout=self._timeout)

    def pods(self) -> list[dict[str, Any]]:
        return self.pod_listing()[0]

    def pod_listing(self) -> tuple[list[dict[str, Any]], str]:
        """Every pod of every namespace and the resourceVersion to watch pods from."""
        return _pages(self._core.list_pod_for_all_namespaces, timeout=self._timeout)

    def pod_pages(self) -> PagedListing:
        """Every pod of every namespace, page by page as they arrive (the start-up sync)."""
        return PagedListing(self._core.list_pod_for_all_namespaces, self._timeout)

    def quotas(self) -> list[dict[str, Any]] | None:
        """Every ElasticQuota, or None when the CRD is not installed."""
        try:
            return _pages(
                self._custom.list_cluster_custom_object,
                QUOTA_GROUP,
                QUOTA_VERSION,
                QUOTA_PLURAL,
                timeout=self._timeout,
            )[0]
        except client.ApiException as error:
            if error.status == 404:
                return None
            raise

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """One pod as the API server has it now, or None when it no longer exists."""
        try:
            answer = self._core.read_namespaced_pod(
                name, namespace, _preload_content=False, _request_timeout=self._timeout
            )
        except client.ApiException as error:
            if error.status == 404:
                return None
            raise
        found: dict[str, Any] = json.loads(answer.data)  # type: ignore[attr-defined]
        return found

    def configmap(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            answer = self._core.read_namespaced_config_map(
                name, namespace, _preload_content=False, _request_timeout=self._timeout
            )
        except client.ApiException as error:
            if error.status == 404:
                return None
            raise
        found: dict[str, Any] = json.loads(answer.data)  # type: ignore[arg-type]
        return found
