"""The operator's housekeeping thread: the periodic chores beside the watches, leader or not.

Every tick (about a second): re-read the scheduler ConfigMap and hot-reload it when it changed,
ask again for pods whose binding failed once their back-off is over, read again pods whose
binding's outcome is still unknown (the response was lost and the pod could not be read), post
again the bindings given up on transient errors of pods the server still shows pending,
finish quota deletions the core deferred. Every ten seconds, when something happened: one log line saying what the
replica did. (Pods and nodes that vanish unseen are the watches' business: they watch from the
start-up listing's resourceVersion and list again when it expires, shim/kube/watch/reflector.py.)
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shim.kube.operator import HerderOperator

log = logging.getLogger("herder.operator")

PROGRESS_EVERY = 10.0


class Housekeeper:
    def __init__(self, operator: HerderOperator, interval: float) -> None:
        self._op = operator
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="herder-housekeeping", daemon=True)
        self._next_progress = 0.0
        self._reported_bound = 0

    def synced(self) -> None:
        """The start-up listing is loaded: the first progress line comes ten seconds from now."""
        self._next_progress = time.monotonic() + PROGRESS_EVERY

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(30)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            for chore in (self._reload, self._retry, self._progress):
                if self._stop.is_set() or not self._op.alive:
                    return
                try:
                    chore()
                except Exception as error:
                    log.warning("housekeeping: %s failed: %s", chore.__name__.strip("_"), error)

    def _reload(self) -> None:
        self._op.reloader.check()

    def _retry(self) -> None:
        self._op.pods.retry_due()
        for key in self._op.pods.unresolved_due():
            self._op.look_at_binding(key)
        for key, node in self._op.pods.repost_due():
            self._op.binder.submit(key, node)
        self._op.quotas.retry()

    def _progress(self) -> None:
        now = time.monotonic()
        if now < self._next_progress:
            return
        self._next_progress = now + PROGRESS_EVERY
        bound = self._op.bound
        if bound == self._reported_bound:
            return
        counts = self._op.pods.counts()
        errors = self._op.metrics.bind_errors()
        log.info(
            "bound %d pods in the last %.0fs (%d in all); %d Herder pods pending, %d running; binding errors %s",
            bound - self._reported_bound,
            PROGRESS_EVERY,
            bound,
            counts["ask"],
            counts["own"],
            errors or "none",
        )
        self._reported_bound = bound
