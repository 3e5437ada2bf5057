"""A controller of the emulated cluster's harness: `reconcile` every `interval` seconds in a thread."""

from __future__ import annotations

import threading

from kubernetes.client.rest import ApiException


class PollingController:
    name = "controller"

    def __init__(self, interval: float = 0.2) -> None:
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)

    def start(self) -> PollingController:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def reconcile(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.reconcile()
            except ApiException:
                continue  # an object deleted mid-pass: the next pass sees the new state
