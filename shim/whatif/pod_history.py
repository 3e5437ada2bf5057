"""`herder trace --from-pods PODS.json`: what ran, as a workload trace to replay (shim/sim/trace.py).

Reads `kubectl get pods -A -o json` (a List, or a single Pod). Each pod becomes a row: its
arrival (creation, in seconds after the earliest pod's), its duration (from its start to the
last container's finish; empty for a pod still running or that never started), namespace,
queue label, user and groups (Herder's user annotation), requests, priority, application and
scheduler. A gang's pods (YuniKorn task groups) become one row of that many pods with the
gang's minimum, since a gang is replayed whole. Gang placeholders are left out: the replay
makes its own.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from shim.convert.gangs.yunikorn import ANNOTATION_TASK_GROUPS, is_placeholder
from shim.convert.identity import application_id, queue_name, user_info
from shim.convert.objects import ConversionError, parse_json
from shim.convert.pod_size import pod_resource
from shim.sim.trace import COLUMNS, GPU


class HistoryError(ValueError):
    """The file is not a pod listing."""


def _epoch(text: object) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _finished(pod: Mapping[str, Any]) -> float | None:
    ends = []
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        terminated = (status.get("state") or {}).get("terminated") or {}
        end = _epoch(terminated.get("finishedAt"))
        if end is not None:
            ends.append(end)
    return max(ends) if ends else None


def _requests(pod: Mapping[str, Any]) -> dict[str, str]:
    resource = pod_resource(pod)
    out: dict[str, str] = {}
    for key, value in resource.items():
        if key == "vcore":
            out["cpu"] = f"{value}m"
        elif key == "memory":
            out["memory"] = str(value)
        elif key == GPU:
            out["gpu"] = str(value)
    return out


def _gang_minimum(pod: Mapping[str, Any]) -> int | None:
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_TASK_GROUPS)
    if raw is None:
        return None
    try:
        groups = parse_json(raw, "task groups")
    except ConversionError:
        return None
    if not isinstance(groups, list):
        return None
    members = [g.get("minMember") for g in groups if isinstance(g, Mapping)]
    total = sum(m for m in members if isinstance(m, int) and not isinstance(m, bool) and m > 0)
    return total or None


def _items(document: object) -> list[Mapping[str, Any]]:
    if isinstance(document, Mapping) and document.get("kind") == "Pod":
        return [document]
    if isinstance(document, Mapping) and isinstance(document.get("items"), list):
        return [item for item in document["items"] if isinstance(item, Mapping)]
    raise HistoryError("expected `kubectl get pods -A -o json` output: a List of Pods")


def history_rows(document: object) -> tuple[list[dict[str, str]], list[str]]:
    """The trace's rows (column -> text) in arrival order, and notes on pods left out."""
    pods = [pod for pod in _items(document) if not is_placeholder(pod)]
    notes: list[str] = []
    created = {id(pod): _epoch((pod.get("metadata") or {}).get("creationTimestamp")) for pod in pods}
    known = [t for t in created.values() if t is not None]
    if not known:
        return [], ["no pod has a creationTimestamp"] if pods else []
    origin = min(known)
    rows: list[dict[str, str]] = []
    gangs: dict[str, dict[str, str]] = {}
    for pod in sorted(pods, key=lambda p: created[id(p)] or origin):
        meta = pod.get("metadata") or {}
        name = f"{meta.get('namespace', 'default')}/{meta.get('name')}"
        try:
            requests = _requests(pod)
            user = user_info(pod)
        except ConversionError as error:
            notes.append(f"{name} left out: {error}")
            continue
        arrival = (created[id(pod)] or origin) - origin
        start, end = _epoch((pod.get("status") or {}).get("startTime")), _finished(pod)
        duration = f"{max(end - start, 0.001):g}" if start is not None and end is not None else ""
        spec = pod.get("spec") or {}
        app = application_id(pod)
        row = {
            "arrival": f"{arrival:g}",
            "duration": duration,
            "namespace": str(meta.get("namespace") or "default"),
            "queue": queue_name(pod) or "",
            "user": user.user if user.user != "nobody" else "",
            "groups": ";".join(user.groups),
            "cpu": requests.get("cpu", ""),
            "memory": requests.get("memory", ""),
            "gpu": requests.get("gpu", ""),
            "pods": "1",
            "application": app,
            "gang": "",
            "priority": str(spec["priority"]) if isinstance(spec.get("priority"), int) else "",
            "scheduler": str(spec.get("schedulerName") or "default-scheduler"),
            "name": str(meta.get("name") or ""),
        }
        minimum = _gang_minimum(pod)
        gang = gangs.get(app)
        if gang is not None:
            gang["pods"] = str(int(gang["pods"]) + 1)
            if duration and (not gang["duration"] or float(duration) > float(gang["duration"])):
                gang["duration"] = duration
            continue
        if minimum is not None:
            row.update(gang=str(minimum), name=app)
            gangs[app] = row
        rows.append(row)
    for gang in gangs.values():  # a trace's gang holds at least its minimum: pods not seen count as members
        if int(gang["pods"]) < int(gang["gang"]):
            notes.append(f"gang {gang['application']}: {gang['pods']} pods seen, minimum {gang['gang']}")
            gang["gang"] = gang["pods"]
    return rows, notes


def write_csv(rows: Iterable[Mapping[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[c for c in COLUMNS if c != "requests"], lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    return out.getvalue()
