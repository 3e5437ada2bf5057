"""Watching pods and nodes: list once, then follow one watch stream per kind, in a thread each.

A burst of pods is the scheduler's hot path: every pod arrives as ADDED and leaves its pending
state as MODIFIED after the binding. kopf handles each event as an object with a life of its
own (a worker task, loggers, a diff base, cause detection), which cost about 0.5 ms of CPU per
event here, four times what Herder itself does with the pod (docs/performance.md). So pods and
nodes take the plain path every Kubernetes informer takes: the operator's start-up listing
gives a resourceVersion, and a watch from that version (`allowWatchBookmarks`, a server-side
timeout) feeds each event straight to `PodSync` or `NodeSync`. kopf still runs the operator
(start-up, shutdown, namespaces, ElasticQuotas, webhooks); it never sees a pod or a node, so it
cannot write to one. A stream's chunked body is read straight from its socket
(`shim/kube/watch/chunked.py`): urllib3 read each event through several layers of Python.

The stream reconnects from the last resourceVersion it saw (a bookmark counts), with a growing
pause after failures. A stream the server served (it delivered an event, or stayed open a few
seconds) and that was then cut is no failure of the server: proxies, load balancers and NAT
tables drop long-lived connections, and a watch is the longest-lived there is; it reconnects
after the first pause again, so a quiet watch (nodes, volumes) cut every few seconds never
drifts to the longest pause and sees a new node late. Only streams that cannot be opened, or
break at once, back off (0.5 s doubling, up to `max_pause`: 30 s for pods, capped lower for
nodes and storage, which decide where pods may go). When the server no longer has that version
(410 Gone, as a status or as an ERROR event), the kind is listed again: every object is
applied and the ones missing from the listing are forgotten (`relist`). Events are applied in
the order they arrive.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import urllib3
from kubernetes import client

from shim.kube.watch.chunked import raw_body

log = logging.getLogger("herder.watch")

Apply = Callable[[Mapping[str, Any]], None]
Listing = Callable[[], "tuple[list[dict[str, Any]], str]"]
"""list() -> (every object, the listing's resourceVersion)."""
Observe = Callable[[str, str], None]
"""observe(kind, reason): a stream reopened because it `ended`, was `cut` after the server served
it, `broken` (it could not be opened or broke at once) or `expired`."""
Relist = Callable[[list[dict[str, Any]], float], None]
"""relist(every object, when the listing began (monotonic)): apply them all, forget the rest."""

READ_SIZE = 1 << 16


class WatchFailed(Exception):
    """The API server refused the watch or sent an ERROR event; `status` is its HTTP code."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status


class Expired(WatchFailed):
    """410 Gone: the resourceVersion to resume from is no longer kept; list again."""


@dataclass(frozen=True, slots=True)
class WatchTiming:
    server_timeout: float = 300.0  # asked of the server (timeoutSeconds); it ends the stream then
    read_timeout: float = 330.0  # no byte for this long (not even a bookmark): reconnect
    connect_timeout: float = 30.0
    first_pause: float = 0.5  # after a failed stream, doubling up to max_pause
    max_pause: float = 30.0
    served_after: float = 1.0  # a stream open this long (or that delivered) was served, then cut


# Nodes and storage objects decide where pods may go: their watches retry sooner.
PLACEMENT_TIMING = WatchTiming(max_pause=5.0)


@dataclass(frozen=True, slots=True)
class WatchTarget:
    """What one reflector follows and where it sends each event."""

    kind: str  # "pods", for log lines
    path: str  # "/api/v1/pods"
    listing: Listing
    apply: Apply  # ADDED and MODIFIED
    delete: Apply  # DELETED
    relist: Relist  # a whole fresh listing, after 410 Gone


def split_lines(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Newline-delimited JSON from a byte stream, whatever the chunk boundaries."""
    rest = b""
    for chunk in chunks:
        if not chunk:
            continue
        rest += chunk
        *lines, rest = rest.split(b"\n")
        for line in lines:
            if line.strip():
                yield line
    if rest.strip():
        yield rest


class Reflector:
    def __init__(
        self,
        api_client: client.ApiClient,
        target: WatchTarget,
        timing: WatchTiming = WatchTiming(),
        observe: Observe | None = None,
    ) -> None:
        config = copy.copy(api_client.configuration)
        config.connection_pool_maxsize = 1
        self._api = client.ApiClient(config)
        self._api.user_agent = api_client.user_agent
        self._target = target
        self._timing = timing
        self._observe = observe or (lambda kind, reason: None)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._response: urllib3.BaseHTTPResponse | None = None
        self._thread: threading.Thread | None = None
        self.resource_version = ""
        self.streams = 0  # watch connections opened
        self.relists = 0
        self.cut = 0  # streams the server served that were then cut (reconnected at the first pause)
        self._served = False  # the current stream delivered an event or stayed open `served_after`
        self._opened_at = 0.0

    def start(self, resource_version: str) -> None:
        """Follow the kind from `resource_version` (the start-up listing's) in a thread of its own."""
        self.resource_version = resource_version
        self._thread = threading.Thread(target=self._run, name=f"herder-watch-{self._target.kind}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """End the stream now (the blocked read is cut) and wait for the thread."""
        self._stop.set()
        with self._lock:
            response = self._response
        if response is not None:
            # Already released or closed: then the thread is not blocked on it.
            with contextlib.suppress(ValueError, RuntimeError, OSError):
                response.shutdown()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        pause = self._timing.first_pause
        must_list = False
        just_listed = False  # nothing watched since the last listing
        while not self._stop.is_set():
            try:
                if must_list:
                    self._relist()
                    must_list, just_listed = False, True
                if self._follow():
                    pause, just_listed = self._timing.first_pause, False
                if not self._stop.is_set():
                    self._observe(self._target.kind, "ended")
                continue
            except Expired as error:
                must_list = True
                self._observe(self._target.kind, "expired")
                if not just_listed:
                    log.info("%s watch: %s; listing again", self._target.kind, error)
                    continue
                problem = f"even the fresh listing's resourceVersion is refused ({error})"
            except Exception as error:
                if self._stop.is_set():
                    return
                if self._was_served():
                    # Served, then cut (a proxy, a load balancer): no reason to wait longer each time.
                    self._observe(self._target.kind, "cut")
                    self.cut += 1
                    pause = self._timing.first_pause
                    log.info(
                        "%s watch cut after %.0fs (%s); again from resourceVersion %s in %.1fs",
                        self._target.kind,
                        time.monotonic() - self._opened_at,
                        error,
                        self.resource_version,
                        pause,
                    )
                    self._stop.wait(pause)
                    continue
                self._observe(self._target.kind, "broken")
                problem = f"broke ({error})"
            log.warning(
                "%s watch %s; again from resourceVersion %s in %.1fs",
                self._target.kind,
                problem,
                self.resource_version,
                pause,
            )
            self._stop.wait(pause)
            pause = min(pause * 2, self._timing.max_pause)

    def _was_served(self) -> bool:
        """Whether the stream that just broke had been served: it delivered an event, or the
        server kept it open `served_after` seconds (a quiet watch sends nothing for minutes)."""
        return self._served or (self._opened_at > 0 and time.monotonic() - self._opened_at >= self._timing.served_after)

    def _relist(self) -> None:
        began = time.monotonic()
        items, version = self._target.listing()
        self._target.relist(items, began)
        self.resource_version = version
        self.relists += 1

    def _follow(self) -> bool:
        """One watch stream until it ends; True when it delivered anything (so the pause resets)."""
        self._served, self._opened_at = False, 0.0
        response = self._open()
        self._opened_at = time.monotonic()
        delivered = ended = False
        body = raw_body(response)
        try:
            for line in split_lines(iter(body) if body is not None else self._chunks(response)):
                if self._stop.is_set():
                    break
                self._dispatch(json.loads(line))
                delivered = self._served = True
            else:
                ended = True
        finally:
            with self._lock:
                self._response = None
            if ended and body is None:
                response.release_conn()  # read to its end: the connection can serve the next watch
            else:
                # Left mid-stream (unread bytes must not reach the next request), or read past
                # urllib3, which then cannot tell that the body is over.
                response.close()
        return delivered

    def _open(self) -> urllib3.BaseHTTPResponse:
        path = self._target.path
        query = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(int(self._timing.server_timeout)),
        }
        if self.resource_version:
            query["resourceVersion"] = self.resource_version
        headers = {**self._api.default_headers, "Accept": "application/json"}
        self._api.update_params_for_auth(headers, None, ["BearerToken"], path, "GET", None)
        response = self._api.rest_client.pool_manager.request(
            "GET",
            f"{self._api.configuration.host}{path}?{urlencode(query)}",
            headers=headers,
            preload_content=False,
            retries=False,
            timeout=urllib3.Timeout(connect=self._timing.connect_timeout, read=self._timing.read_timeout),
        )
        if response.status != 200:
            body = response.read().decode("utf-8", "replace")
            response.release_conn()
            raise (Expired if response.status == 410 else WatchFailed)(response.status, body[:300])
        with self._lock:
            self._response = response
        self.streams += 1
        if self._stop.is_set():  # stop() ran before the response was known to it
            response.release_conn()
            self._response = None
            raise WatchFailed(0, "stopped")
        return response

    @staticmethod
    def _chunks(response: urllib3.BaseHTTPResponse) -> Iterator[bytes]:
        while True:
            chunk = response.read1(READ_SIZE)
            if not chunk:
                return
            yield chunk

    def _dispatch(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        body = event.get("object")
        if not isinstance(body, Mapping):
            return
        if kind == "ERROR":
            code = int(body.get("code") or 0)
            raise (Expired if code == 410 else WatchFailed)(code, str(body.get("message", "")))
        version = (body.get("metadata") or {}).get("resourceVersion")
        try:
            if kind in ("ADDED", "MODIFIED"):
                self._target.apply(body)
            elif kind == "DELETED":
                self._target.delete(body)
        except Exception:
            # One object Herder cannot take must not stall the stream behind it (or replay forever).
            meta = body.get("metadata") or {}
            log.exception(
                "%s watch: %s event for %s/%s failed",
                self._target.kind,
                kind,
                meta.get("namespace", ""),
                meta.get("name", ""),
            )
        if version:
            self.resource_version = str(version)
