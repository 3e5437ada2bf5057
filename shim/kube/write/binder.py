"""Binding placed pods to their nodes: concurrent, retried on transient errors, at most once per pod.

The core's bind() callback only queues the work here; a set of workers posts the pods/binding
subresource. A 5xx, 429 or timeout is retried with exponential backoff; a pod that is gone (404)
or already bound (409), or whose retries are spent, is handed back with `release`: the operator
then reads the pod and the server's answer decides (a 409 means "look", never "forget": the
binding may have landed on the attempt whose response was lost).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("herder.binder")

RETRY = "retry"
GONE = "gone"
FAILED = "failed"

PostBinding = Callable[[str, str, str, str], None]
"""post_binding(namespace, pod_name, node_name, pod_key); raises on an API error."""

Locate = Callable[[str], "tuple[str, str] | None"]
"""locate(pod_key) -> (namespace, name), or None when the pod is no longer known."""


@dataclass(frozen=True, slots=True)
class BindPolicy:
    workers: int = 8
    attempts: int = 5
    first_backoff: float = 0.1
    max_backoff: float = 2.0


class NotLeader(Exception):
    """This replica may not write now (it lost, or could not renew, the Lease): see leader/loops.py."""


def classify(error: BaseException) -> str:
    """Whether an API error is worth retrying, means the pod is gone/bound, or is final.

    An error without an HTTP status is a network failure or timeout, so it is retried.
    """
    if isinstance(error, NotLeader):
        return FAILED  # handed back at once: the replica that leads now binds the pod
    status = getattr(error, "status", None)
    if status in (404, 409):
        return GONE
    if isinstance(status, int) and (status >= 500 or status == 429):
        return RETRY
    if not status and not isinstance(error, (ValueError, TypeError)):
        return RETRY
    return FAILED


class Binder:
    """`workers` threads take bindings from one queue, each pod at most once.

    A plain queue and long-lived threads, not an executor: a burst queues one binding per pod,
    and an executor's future, condition and wake-up per item cost more than the bind's own work.
    """

    def __init__(
        self,
        post_binding: PostBinding,
        locate: Locate,
        release: Callable[[str], None],
        policy: BindPolicy = BindPolicy(),
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._post = post_binding
        self._locate = locate
        self._release = release
        self._policy = policy
        self._sleep = sleep
        self._queue: queue.SimpleQueue[tuple[str, str] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._claimed: set[str] = set()
        self._pending = 0  # queued or being posted
        self._closed = False
        self._workers = [
            threading.Thread(target=self._work, name=f"herder-bind-{index}", daemon=True)
            for index in range(policy.workers)
        ]
        for worker in self._workers:
            worker.start()

    def submit(self, key: str, node: str) -> bool:
        """Queue one binding; False when this pod was already queued or bound (never bind twice)."""
        with self._lock:
            if key in self._claimed or self._closed:
                return False
            self._claimed.add(key)
            self._pending += 1
        self._queue.put((key, node))
        return True

    def forget(self, key: str) -> None:
        """The pod was deleted: a later pod with the same key may be bound again."""
        with self._lock:
            self._claimed.discard(key)

    def in_flight(self) -> int:
        with self._lock:
            return self._pending

    def queued(self) -> int:
        """Bindings waiting for a worker (beyond the ones being posted)."""
        with self._lock:
            return max(0, self._pending - len(self._workers))

    def shutdown(self, timeout: float | None = None) -> None:
        """Stop taking work and wait for queued and in-flight binds to finish (clean SIGTERM)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            self._closed = True
            while self._pending:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    log.warning("shutting down with %d bindings unfinished", self._pending)
                    break
                self._idle.wait(remaining)
        for _ in self._workers:
            self._queue.put(None)
        for worker in self._workers:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            worker.join(remaining)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                self._bind(*item)
            except Exception:
                log.exception("binding %s to %s failed unexpectedly", *item)
            finally:
                with self._lock:
                    self._pending -= 1
                    if not self._pending:
                        self._idle.notify_all()

    def _bind(self, key: str, node: str) -> None:
        backoff = self._policy.first_backoff
        for attempt in range(1, self._policy.attempts + 1):
            where = self._locate(key)
            if where is None:
                log.info("pod %s vanished before binding to %s; releasing", key, node)
                self._give_back(key)
                return
            namespace, name = where
            try:
                self._post(namespace, name, node, key)
            except Exception as error:
                verdict = classify(error)
                if verdict == RETRY and attempt < self._policy.attempts:
                    log.warning(
                        "binding %s/%s to %s failed (%s); retry %d",
                        namespace,
                        name,
                        node,
                        error,
                        attempt,
                    )
                    self._sleep(backoff)
                    backoff = min(backoff * 2, self._policy.max_backoff)
                    continue
                log.warning("binding %s/%s to %s given up (%s): %s", namespace, name, node, verdict, error)
                self._give_back(key)
                return
            log.debug("bound %s/%s to %s", namespace, name, node)
            return

    def _give_back(self, key: str) -> None:
        self.forget(key)
        self._release(key)
