"""The scheduler health check (`/ws/v1/scheduler/healthcheck`): is the core's bookkeeping sound?

YuniKorn's shape, `{"Healthy": bool, "HealthChecks": [{"Name", "Succeeded", "Description",
"DiagnosisMessage"}]}`, computed from one full state dump, so every check sees the same
instant. The checks are the invariants users rely on and a bug would break:

- no resource count below zero (queues, nodes, applications);
- every node's allocated and occupied equal the sums of its pods, and Herder never put more
  on a node than its capacity;
- every pod on a node belongs to a live application, and every application's pod is on a node;
- every parent queue's allocated equals its children's, and the root's equals the nodes'.

It reads the whole state, so it is for people and alerts, not for a liveness probe: probes
belong on `/healthz` and `/readyz`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

SHOWN = 5  # problems named in a diagnosis; the rest are counted


def _plain(res: Mapping[str, int] | None) -> dict[str, int]:
    return {key: val for key, val in (res or {}).items() if val}


def _sum(resources: list[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for res in resources:
        for key, val in res.items():
            total[key] = total.get(key, 0) + val
    return _plain(total)


def _walk(queue: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield queue
    for child in queue.get("children", []):
        yield from _walk(child)


def _check(name: str, description: str, problems: list[str]) -> dict[str, Any]:
    check: dict[str, Any] = {"Name": name, "Succeeded": not problems, "Description": description}
    if problems:
        shown = "; ".join(problems[:SHOWN])
        more = f" (and {len(problems) - SHOWN} more)" if len(problems) > SHOWN else ""
        check["DiagnosisMessage"] = shown + more
    return check


def _negative(dump: dict[str, Any]) -> dict[str, Any]:
    problems: list[str] = []

    def look(what: str, res: Mapping[str, int]) -> None:
        bad = {key: val for key, val in res.items() if val < 0}
        if bad:
            problems.append(f"{what}: {bad}")

    for queue in _walk(dump["queues"]):
        look(f"queue {queue['queuename']} allocated", queue["allocatedResource"])
        look(f"queue {queue['queuename']} pending", queue["pendingResource"])
    for node in dump["nodes"]:
        look(f"node {node['nodeID']} allocated", node["allocated"])
        look(f"node {node['nodeID']} occupied", node["occupied"])
    for app in dump["applications"]:
        look(f"application {app['applicationID']} used", app.get("usedResource", {}))
        look(f"application {app['applicationID']} pending", app.get("pendingResource", {}))
    return _check("Negative resources", "No resource count is below zero", problems)


def _nodes(dump: dict[str, Any]) -> dict[str, Any]:
    problems: list[str] = []
    for node in dump["nodes"]:
        name = node["nodeID"]
        summed = _sum([a["resource"] for a in node["allocations"]])
        if summed != _plain(node["allocated"]):
            problems.append(f"node {name} allocated {_plain(node['allocated'])} but its pods sum to {summed}")
        foreign = _sum([a["resource"] for a in node["foreignAllocations"]])
        if foreign != _plain(node["occupied"]):
            problems.append(f"node {name} occupied {_plain(node['occupied'])} but its foreign pods sum to {foreign}")
        over = {key: val for key, val in node["allocated"].items() if val > node["capacity"].get(key, 0) and val > 0}
        if over:
            problems.append(f"node {name} has {over} allocated by Herder, above its capacity {node['capacity']}")
    return _check(
        "Node allocations",
        "Each node's allocated and occupied match its pods, and Herder stays within its capacity",
        problems,
    )


def _orphans(dump: dict[str, Any]) -> dict[str, Any]:
    problems: list[str] = []
    on_nodes = {a["allocationKey"]: node["nodeID"] for node in dump["nodes"] for a in node["allocations"]}
    in_apps: dict[str, str] = {}
    for app in dump["applications"]:
        for allocation in app.get("allocations", []):
            in_apps[allocation["allocationKey"]] = app["applicationID"]
    for key in sorted(on_nodes.keys() - in_apps.keys()):
        problems.append(f"pod {key} on node {on_nodes[key]} belongs to no application")
    for key in sorted(in_apps.keys() - on_nodes.keys()):
        problems.append(f"pod {key} of application {in_apps[key]} is on no node")
    return _check("Orphan allocations", "Every placed pod is on a node and in an application", problems)


def _queues(dump: dict[str, Any]) -> dict[str, Any]:
    problems: list[str] = []
    for queue in _walk(dump["queues"]):
        children = queue.get("children", [])
        if not children:
            continue
        summed = _sum([child["allocatedResource"] for child in children])
        if summed != _plain(queue["allocatedResource"]):
            problems.append(
                f"queue {queue['queuename']} allocated {_plain(queue['allocatedResource'])}"
                f" but its children sum to {summed}"
            )
    root = dump["queues"]
    on_nodes = _sum([node["allocated"] for node in dump["nodes"]])
    if on_nodes != _plain(root["allocatedResource"]):
        problems.append(
            f"queue {root['queuename']} allocated {_plain(root['allocatedResource'])} but nodes hold {on_nodes}"
        )
    return _check("Queue usage", "Parent queues hold the sum of their children, the root what the nodes hold", problems)


def health_document(dump: dict[str, Any]) -> dict[str, Any]:
    checks = [_negative(dump), _nodes(dump), _orphans(dump), _queues(dump)]
    return {"Healthy": all(check["Succeeded"] for check in checks), "HealthChecks": checks}
