"""Evicting pods the core chose to reclaim, through the Eviction API so PodDisruptionBudgets hold.

A refusal (429 from a PodDisruptionBudget, or any final error) is reported back to the core with
`eviction_failed(key, reason)` so it can choose another victim; a pod already gone needs nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from shim.kube.write.binder import Locate

log = logging.getLogger("herder.evictor")

PostEviction = Callable[[str, str], None]
"""post_eviction(namespace, pod_name); raises on an API error."""


def refusal_reason(error: BaseException) -> str | None:
    """Why the eviction was refused, or None when the pod is already gone (404)."""
    status = getattr(error, "status", None)
    if status == 404:
        return None
    if status == 429:
        return "refused by a PodDisruptionBudget (429)"
    return f"eviction failed: {error}"


class Evictor:
    def __init__(
        self,
        post_eviction: PostEviction,
        locate: Locate,
        eviction_failed: Callable[[str, str], None],
        workers: int = 4,
        attempts: int = 3,
        backoff: float = 0.2,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._post = post_eviction
        self._locate = locate
        self._failed = eviction_failed
        self._attempts = attempts
        self._backoff = backoff
        self._sleep = sleep
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="herder-evict")

    def submit(self, key: str, reason: str) -> None:
        self._pool.submit(self._evict, key, reason)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)

    def _evict(self, key: str, reason: str) -> None:
        where = self._locate(key)
        if where is None:
            return
        namespace, name = where
        for attempt in range(1, self._attempts + 1):
            try:
                self._post(namespace, name)
            except Exception as error:
                status = getattr(error, "status", None)
                if isinstance(status, int) and status >= 500 and attempt < self._attempts:
                    self._sleep(self._backoff * attempt)
                    continue
                why = refusal_reason(error)
                if why is not None:
                    log.info("eviction of %s/%s (%s) refused: %s", namespace, name, reason, why)
                    self._failed(key, why)
                return
            log.info("evicted %s/%s: %s", namespace, name, reason)
            return
