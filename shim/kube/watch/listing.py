"""Listing every node, namespace, ElasticQuota, storage object and pod with the official client, as plain dicts.

Used for the start-up sync (nothing is scheduled before the whole cluster is known) and for
listing again after a watch's resourceVersion expired. Lists are paged (`limit`/`continue`) so
a large cluster is never one huge response, and read as raw JSON: the scheduler works on
dicts, and building the client's model objects for thousands of pods only to turn them back
into dicts would be wasted time. The reads go by path (shim/kube/calls.py), without the
client's generated API classes.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

from kubernetes import client

from shim.kube.calls import ApiCalls, segment
from shim.kube.kinds import QUOTA_GROUP, QUOTA_PLURAL, QUOTA_VERSION

PAGE = 500

# What each listing reads (the start-up sync, and a watch's listing again after 410 Gone).
STORAGE_LISTS = {
    "storageclasses": "/apis/storage.k8s.io/v1/storageclasses",
    "persistentvolumes": "/api/v1/persistentvolumes",
    "persistentvolumeclaims": "/api/v1/persistentvolumeclaims",
}
QUOTAS = f"/apis/{QUOTA_GROUP}/{QUOTA_VERSION}/{QUOTA_PLURAL}"


def _page_documents(calls: ApiCalls, path: str, timeout: float) -> Iterator[tuple[list[dict[str, Any]], str | None]]:
    """Each page's items as it arrives, with the listing's resourceVersion on the last page (the
    version to watch from) and None on the others."""
    token: str | None = None
    while True:
        query = {"limit": str(PAGE)}
        if token:
            query["continue"] = token
        document = calls.get(path, query, timeout=timeout)
        meta = document.get("metadata") or {}
        token = meta.get("continue")
        yield document.get("items") or [], None if token else str(meta.get("resourceVersion") or "")
        if not token:
            return


def _pages(calls: ApiCalls, path: str, timeout: float) -> tuple[list[dict[str, Any]], str]:
    """Every item, and the resourceVersion of the listing (its last page) to watch from."""
    items: list[dict[str, Any]] = []
    for page, version in _page_documents(calls, path, timeout):
        items.extend(page)
        if version is not None:
            return items, version
    return items, ""


class PagedListing:
    """The pages of a listing as they arrive, the next one read (by a thread of its own) while
    the caller works on the current one: the API server prepares a page while Herder converts the
    last. `version` is the listing's resourceVersion once every page was read. A caller that stops
    early (an error while it converts) lets the reading thread end too."""

    def __init__(self, calls: ApiCalls, path: str, timeout: float) -> None:
        self._calls = calls
        self._path = path
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
            for page, version in _page_documents(self._calls, self._path, self._timeout):
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
        self._calls = ApiCalls(api_client, timeout)
        self._timeout = timeout

    def nodes(self) -> list[dict[str, Any]]:
        return self.node_listing()[0]

    def node_listing(self) -> tuple[list[dict[str, Any]], str]:
        """Every node and the resourceVersion to watch nodes from."""
        return _pages(self._calls, "/api/v1/nodes", self._timeout)

    def namespaces(self) -> list[dict[str, Any]]:
        return _pages(self._calls, "/api/v1/namespaces", self._timeout)[0]

    def storage_listing(self, plural: str) -> tuple[list[dict[str, Any]], str]:
        """Every StorageClass, PersistentVolume or PersistentVolumeClaim, and the version to watch from."""
        return _pages(self._calls, STORAGE_LISTS[plural], self._timeout)

    def custom_listing(self, group: str, version: str, plural: str) -> tuple[list[dict[str, Any]], str]:
        """Every object of a served custom kind (a PodGroup API's) and the version to watch from."""
        return _pages(self._calls, f"/apis/{segment(group)}/{segment(version)}/{segment(plural)}", self._timeout)

    def pods(self) -> list[dict[str, Any]]:
        return self.pod_listing()[0]

    def pod_listing(self) -> tuple[list[dict[str, Any]], str]:
        """Every pod of every namespace and the resourceVersion to watch pods from."""
        return _pages(self._calls, "/api/v1/pods", self._timeout)

    def pod_pages(self) -> PagedListing:
        """Every pod of every namespace, page by page as they arrive (the start-up sync)."""
        return PagedListing(self._calls, "/api/v1/pods", self._timeout)

    def quotas(self) -> list[dict[str, Any]] | None:
        """Every ElasticQuota, or None when the CRD is not installed."""
        try:
            return _pages(self._calls, QUOTAS, self._timeout)[0]
        except client.ApiException as error:
            if error.status == 404:
                return None
            raise

    def pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """One pod as the API server has it now, or None when it no longer exists."""
        return self._one(f"/api/v1/namespaces/{segment(namespace)}/pods/{segment(name)}")

    def configmap(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self._one(f"/api/v1/namespaces/{segment(namespace)}/configmaps/{segment(name)}")

    def _one(self, path: str) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = self._calls.get(path)
        except client.ApiException as error:
            if error.status == 404:
                return None
            raise
        return found
