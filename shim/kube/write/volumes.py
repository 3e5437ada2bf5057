"""Writing a placement's volume plan before the pod is bound, as kube-scheduler's binder does.

For each claim the core resolved at placement (`Allocation.volume_plan`): a static volume gets
the claim in its `claimRef` (the PersistentVolume controller then binds the claim), a claim to
provision gets the node in its `volume.kubernetes.io/selected-node` annotation (the provisioner
then makes a volume there). Then the pod waits, off the scheduling cycle, until every claim shows
bound; only then does it go to the binder. A write that fails, or a claim still unbound after
`timeout`, hands the pod back (the placement is undone and the pod is tried again: the core
then says why it waits, naming the claim) and records a FailedBinding Event on the pod.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client

from core.objects.ask import Allocation
from core.objects.volumes import SELECTED_NODE, VolumePlan
from shim.kube.calls import STRATEGIC, ApiCalls, segment

log = logging.getLogger("herder.volumes")

ClaimBound = Callable[[str], bool]
Submit = Callable[[str, str], bool]
GiveBack = Callable[[str, str], None]  # (pod key, why)


class VolumeWrites:
    """The two writes a plan needs (a few per pod with claims), strategic merge patches by path."""

    def __init__(self, api_client: client.ApiClient, timeout: float = 10.0) -> None:
        self._calls = ApiCalls(api_client, timeout)

    def bind_volume(self, volume: str, claim: str) -> None:
        namespace, name = claim.split("/", 1)
        body: dict[str, Any] = {
            "spec": {
                "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace, "name": name}
            }
        }
        self._calls.request("PATCH", f"/api/v1/persistentvolumes/{segment(volume)}", body, STRATEGIC)

    def select_node(self, claim: str, node: str) -> None:
        namespace, name = claim.split("/", 1)
        body = {"metadata": {"annotations": {SELECTED_NODE: node}}}
        self._calls.request(
            "PATCH", f"/api/v1/namespaces/{segment(namespace)}/persistentvolumeclaims/{segment(name)}", body, STRATEGIC
        )


class VolumeBinder:
    """A few workers write plans and wait for claims; the pod then goes to `submit` (the binder)."""

    def __init__(
        self,
        writes: VolumeWrites,
        claim_bound: ClaimBound,
        submit: Submit,
        give_back: GiveBack,
        may_write: Callable[[], bool] = lambda: True,
        timeout: float = 120.0,
        poll: float = 0.2,
        workers: int = 4,
    ) -> None:
        self._writes = writes
        self._claim_bound = claim_bound
        self._submit = submit
        self._give_back = give_back
        self._may_write = may_write
        self._timeout = timeout
        self._poll = poll
        self._queue: queue.SimpleQueue[Allocation | None] = queue.SimpleQueue()
        self._stopped = threading.Event()
        self._workers = [
            threading.Thread(target=self._work, name=f"herder-volumes-{n}", daemon=True) for n in range(workers)
        ]
        for worker in self._workers:
            worker.start()

    def submit(self, allocation: Allocation) -> None:
        self._queue.put(allocation)

    def shutdown(self) -> None:
        self._stopped.set()
        for _ in self._workers:
            self._queue.put(None)

    def _work(self) -> None:
        while (allocation := self._queue.get()) is not None:
            try:
                problem = self._carry_out(allocation.volume_plan, allocation.node_id)
            except Exception as error:  # an API error: the pod goes back, the claim named
                problem = f"writing its volume plan failed: {error}"
            if problem is None:
                self._submit(allocation.key, allocation.node_id)
            else:
                log.warning("pod %s not bound to %s: %s", allocation.display_name, allocation.node_id, problem)
                self._give_back(allocation.key, problem)

    def _carry_out(self, plan: VolumePlan, node: str) -> str | None:
        if not self._may_write():  # leader fencing, as for bindings
            return "this replica does not hold a freshly renewed Lease"
        for claim, volume in plan.bind:
            self._writes.bind_volume(volume, claim)
        for claim in plan.provision:
            self._writes.select_node(claim, node)
        waiting = [claim for claim, _ in plan.bind] + list(plan.provision)
        deadline = time.monotonic() + self._timeout
        while waiting:
            waiting = [claim for claim in waiting if not self._claim_bound(claim)]
            if not waiting:
                break
            if time.monotonic() >= deadline or self._stopped.is_set():
                return f"claim {waiting[0]} not bound within {self._timeout:.0f}s"
            time.sleep(self._poll)
        return None
