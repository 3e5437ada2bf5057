"""Gang placeholder pods in the cluster: created where the core placed them, deleted when the
core released or replaced them. The work runs on a few threads of its own, never on the cycle's.

- `create(a)`: the core placed placeholder `a`: POST the pod (shim/placeholders.py builds it
  from the originator pod in the cache), already bound to `a.node_id`. A transient error is
  retried; a final one (or the originator gone) hands the placeholder back to the core with
  `release`, which rolls back every tracker and lets the gang ask for another one.
- `delete(a)`: the core released the placeholder: DELETE it, grace period 0.
- `replace(a)`: real pod `a` takes the place of placeholder `a.replaces`: DELETE the
  placeholder, then hand `a` to the binder (same node).
- `after_deletions_on(node, then)`: any other bind to a node waits for the placeholder
  deletions under way there (a real pod larger than its placeholder releases it, then may be
  placed in its room): the kubelet must not see both.

The core may replace a placeholder in the very cycle it placed it: a deletion waits for the
placeholder's creation, and cancels it when it has not started (then nothing is written at all).

A deleted placeholder is "retiring" until its DELETED event: the core has let go of it already,
so a watch event about it in between must not bring it back (`PodSync` asks `is_retiring`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from core.objects.ask import Allocation
from shim.convert.objects import ConversionError
from shim.placeholders import placeholder_manifest

log = logging.getLogger("herder.placeholders")

FIRST_PAUSE = 0.5
LAST_PAUSE = 30.0

CreatePod = Callable[[str, dict[str, Any]], None]
DeletePod = Callable[[str, str], None]


class PlaceholderWriter:
    def __init__(
        self,
        create_pod: CreatePod,
        delete_pod: DeletePod,
        find_pod: Callable[[str], Mapping[str, Any] | None],
        image_and_scheduler: Callable[[], tuple[str, str]],
        release: Callable[[str], None],
        bind: Callable[[str, str], bool],
        alive: Callable[[], bool] = lambda: True,
        workers: int = 4,
        attempts: int = 4,
        backoff: float = 0.2,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._create_pod = create_pod
        self._delete_pod = delete_pod
        self._find_pod = find_pod
        self._image_and_scheduler = image_and_scheduler
        self._release = release
        self._bind = bind
        self._alive = alive  # False once the replica may not write (not a freshly renewed leader, killed)
        self._attempts = attempts
        self._backoff = backoff
        self._sleep = sleep
        self._lock = threading.Lock()
        self._retiring: set[str] = set()
        self._creating: dict[str, Future[None]] = {}
        self._deleting: dict[str, set[Future[bool]]] = {}  # node -> deletions under way there
        self._failures: dict[str, int] = {}  # application -> placeholder creations failed in a row
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="herder-placeholder")
        self.created = 0
        self.deleted = 0

    # -- the core's callbacks ----------------------------------------------------------------
    def create(self, allocation: Allocation) -> None:
        key = allocation.key
        with self._lock:
            future = self._pool.submit(self._create, allocation)
            self._creating[key] = future
        future.add_done_callback(lambda _: self._created(key, future))

    def delete(self, allocation: Allocation, reason: str) -> None:
        creation = self._retire(allocation.key)
        if creation is not None and creation.cancel():
            self.forget(allocation.key)  # never created: nothing to delete, no DELETED event to wait for
            return
        deletion = self._pool.submit(self._delete, allocation.key, reason, creation)
        node = allocation.node_id
        with self._lock:
            self._deleting.setdefault(node, set()).add(deletion)
        deletion.add_done_callback(lambda done: self._deleted(node, done))

    def after_deletions_on(self, node: str, then: Callable[[], None]) -> None:
        """Run `then` once every placeholder deletion under way on `node` has ended (at once when
        none is): the core counts a released placeholder's room free the moment it lets it go,
        and a pod bound there before the placeholder is gone would meet a kubelet that still
        counts it (and be refused, OutOfcpu)."""
        with self._lock:
            waiting = list(self._deleting.get(node, ()))
        if not waiting:
            then()
            return

        def wait_then() -> None:
            for deletion in waiting:  # submitted before this task (the pool is FIFO): never a deadlock
                deletion.result()
            then()

        self._pool.submit(wait_then)

    def replace(self, allocation: Allocation) -> None:
        creation = self._retire(allocation.replaces)
        if creation is not None and creation.cancel():
            self.forget(allocation.replaces)
            self._bind_real(allocation)
            return
        self._pool.submit(self._replace, allocation, creation)

    # -- the pod watch's questions -----------------------------------------------------------
    def is_retiring(self, key: str) -> bool:
        with self._lock:
            return key in self._retiring

    def forget(self, key: str) -> None:
        """The placeholder's DELETED event came: it is gone for good."""
        with self._lock:
            self._retiring.discard(key)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)

    # -- the work ----------------------------------------------------------------------------
    def _retire(self, key: str) -> Future[None] | None:
        """Mark the placeholder retiring; its creation, if one is still under way."""
        with self._lock:
            self._retiring.add(key)
            return self._creating.pop(key, None)

    def _deleted(self, node: str, deletion: Future[bool]) -> None:
        with self._lock:
            under_way = self._deleting.get(node)
            if under_way is not None:
                under_way.discard(deletion)
                if not under_way:
                    del self._deleting[node]

    def _created(self, key: str, future: Future[None]) -> None:
        with self._lock:
            if self._creating.get(key) is future:
                del self._creating[key]

    def _create(self, allocation: Allocation) -> None:
        ask = allocation.ask
        assert ask is not None and ask.gang is not None
        namespace = allocation.key.rpartition("/")[0]
        originator = self._find_pod(ask.gang.originator)
        try:
            if originator is None:
                raise ConversionError(f"its originator pod {ask.gang.originator} is gone")
            image, scheduler = self._image_and_scheduler()
            body = placeholder_manifest(originator, allocation, image, scheduler)
        except ConversionError as error:
            log.warning("placeholder %s not created: %s", allocation.key, error)
            self._give_back(allocation)
            return
        if self._call(lambda: self._create_pod(namespace, body), f"creating placeholder {allocation.key}"):
            self.created += 1
            with self._lock:
                self._failures.pop(ask.application_id, None)
            log.info("placeholder %s created on %s", allocation.key, allocation.node_id)
        else:
            self._give_back(allocation)

    def _give_back(self, allocation: Allocation) -> None:
        """Hand the placeholder back to the core after a pause that doubles with each failure of
        its application in a row, so a creation the API server keeps refusing never spins."""
        app = allocation.application_id
        with self._lock:
            failures = self._failures[app] = self._failures.get(app, 0) + 1
        self._sleep(min(FIRST_PAUSE * 2 ** (failures - 1), LAST_PAUSE))
        self._release(allocation.key)

    def _delete(self, key: str, reason: str, creation: Future[None] | None = None) -> bool:
        if creation is not None:
            creation.result()  # started before this task (the pool is FIFO): never a deadlock
        namespace, _, name = key.rpartition("/")
        done = self._call(lambda: self._delete_pod(namespace, name), f"deleting placeholder {key}", gone_ok=True)
        if done:
            self.deleted += 1
            log.info("placeholder %s deleted: %s", key, reason)
        return done

    def _replace(self, allocation: Allocation, creation: Future[None] | None) -> None:
        if not self._delete(allocation.replaces, f"replaced by {allocation.display_name}", creation):
            log.warning("placeholder %s could not be deleted; binding %s anyway", allocation.replaces, allocation.key)
        self._bind_real(allocation)

    def _bind_real(self, allocation: Allocation) -> None:
        if not self._bind(allocation.key, allocation.node_id):
            log.warning("pod %s already being bound; second binding refused", allocation.display_name)

    def _call(self, call: Callable[[], None], what: str, gone_ok: bool = False) -> bool:
        """Run one API call with retries on transient errors; True when it took effect."""
        for attempt in range(1, self._attempts + 1):
            try:
                if not self._alive():
                    raise ConnectionError("this replica may not write (not the leader, or stopped)")
                call()
                return True
            except Exception as error:
                status = getattr(error, "status", None)
                if gone_ok and status == 404:
                    return True
                transient = status is None or status == 429 or (isinstance(status, int) and status >= 500)
                if transient and attempt < self._attempts:
                    self._sleep(self._backoff * attempt)
                    continue
                log.warning("%s failed: %s", what, error)
                return False
        return False
