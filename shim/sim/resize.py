"""The simulator's `resize` event: a pod's requests change in place (Kubernetes 1.33+).

`{at, action: resize, namespace, name, requests: {cpu: "6"}}` gives the pod's new total for
each resource named (the first container takes it, the others drop those resources); what it
does not name stays. As on a cluster, the kubelet decides: a running pod grows only when its
node has the room (its `status.containerStatuses[].resources` then show the new size), else the
resize is Deferred, or Infeasible when the node could never hold it, and the pod keeps what it
has. Herder learns the pod's size exactly as the operator does (shim/convert/pod_size.py) and the
core moves every count (core/resize.py). A pending Herder pod is simply asked for again at its
new size; a finished or unknown pod is a `NotFound` scenario event.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from core.resources import QuantityError, format_resource, resource_from_kubernetes
from shim.convert.objects import ConversionError
from shim.convert.pod_size import pod_resource
from shim.convert.pods import pod_to_ask
from shim.sim.cluster import PENDING, SimCluster, SimPod


def _with_requests(manifest: Mapping[str, Any], requests: Mapping[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(dict(manifest))
    containers = changed["spec"]["containers"]
    for index, container in enumerate(containers):
        resources = container.setdefault("resources", {})
        current = dict(resources.get("requests") or {})
        for key, value in requests.items():
            if index == 0:
                current[key] = value
            else:
                current.pop(key, None)
        resources["requests"] = current
    return changed


def _kubelet_holds(manifest: dict[str, Any], held_from: Mapping[str, Any], verdict: str | None) -> None:
    """Write what the kubelet holds per container, and the resize verdict, into the status."""
    status = manifest.setdefault("status", {})
    status["containerStatuses"] = [
        {"name": c.get("name", ""), "resources": {"requests": dict((c.get("resources") or {}).get("requests") or {})}}
        for c in held_from["spec"]["containers"]
    ]
    if verdict is None:
        status.pop("resize", None)
    else:
        status["resize"] = verdict


def resize_pod(cluster: SimCluster, pod: SimPod | None, what: str, requests: Mapping[str, Any], now: float) -> None:
    if pod is None or not pod.live:
        cluster.note(now, what, "NotFound", f"nothing to resize: no live pod {what}")
        return
    try:
        resource_from_kubernetes(requests, f"resize of pod {what}")
        wanted = _with_requests(pod.manifest, requests)
        new_size = pod_resource(wanted)
    except (QuantityError, ConversionError) as err:
        cluster.note(now, what, "ResizeRefused", str(err))
        return
    if pod.state == PENDING:
        pod.manifest = wanted
        cluster.scheduler.add_ask(
            pod_to_ask(wanted, cluster.namespace(pod.namespace), cluster.scheduler_name, groups=cluster.groups.get), now
        )
        cluster.changes += 1
        return
    if pod.node is None or pod.resource is None:  # a foreign pod its scheduler has not placed yet
        pod.manifest = wanted
        return
    old_size = pod.resource
    room = cluster.room(pod.node) + old_size
    capacity = cluster.infos[pod.node].capacity
    if new_size.fits_in(room):
        _kubelet_holds(wanted, wanted, None)
        cluster.resized(pod, new_size)
        verdict = "Resized"
        message = f"pod {what} now holds {format_resource(new_size)}"
    else:
        infeasible = not new_size.fits_in(capacity)
        _kubelet_holds(wanted, pod.manifest, "Infeasible" if infeasible else "Deferred")
        verdict = "ResizeInfeasible" if infeasible else "ResizeDeferred"
        message = (
            f"node {pod.node} cannot hold {format_resource(new_size)} for pod {what};"
            f" it keeps {format_resource(old_size)}"
        )
    pod.manifest = wanted
    cluster.scheduler.resize_allocation(pod.key, pod_resource(wanted))
    cluster.note(now, what, verdict, message)
    cluster.changes += 1
