"""What people see of reservations: documents for the REST API, `herder explain` and the
simulator, and the idle room reserved nodes hold (the cost of fairness, for the metrics)."""

from __future__ import annotations

import math
from typing import Any

from core.reservations.backfill import reserved_start
from core.state import CoreState


def _seconds_until(start: float | None, now: float) -> float | None:
    if start is None or math.isinf(start):
        return None
    return round(max(0.0, start - now), 3)


def reservation_documents(state: CoreState, now: float) -> list[dict[str, Any]]:
    book = state.reservations
    docs = []
    for key, reservation in sorted(book.by_ask.items()):
        app = state.ask_app.get(key)
        ask = app.asks.get(key) if app is not None else None
        docs.append(
            {
                "allocationKey": key,
                "name": ask.display_name if ask is not None else key,
                "applicationID": reservation.app_id,
                "priority": ask.priority if ask is not None else 0,
                "nodeID": reservation.node_id,
                "resource": dict(reservation.resource),
                "since": reservation.since,
                "freesInSeconds": _seconds_until(reserved_start(state, reservation.node_id, now), now),
            }
        )
    return docs


def explain_reservation(state: CoreState, key: str, now: float) -> dict[str, Any] | None:
    """For `herder explain`: the node reserved for a pending pod and when it frees."""
    reservation = state.reservations.by_ask.get(key)
    if reservation is None:
        return None
    return {
        "nodeID": reservation.node_id,
        "resource": dict(reservation.resource),
        "freesInSeconds": _seconds_until(reserved_start(state, reservation.node_id, now), now),
    }


def idle_reserved(state: CoreState) -> dict[str, int]:
    """Per resource, the free room on reserved nodes, up to what each keeps for its reservations."""
    idle: dict[str, int] = {}
    book = state.reservations
    for node_id, on_node in book.by_node.items():
        node = state.partition.nodes.get(node_id)
        if node is None:
            continue
        free = node.free()
        kept: dict[str, int] = {}
        for reservation in on_node.values():
            for name, amount in reservation.resource.items():
                kept[name] = kept.get(name, 0) + amount
        for name, amount in kept.items():
            unused = min(amount, max(0, free.get(name, 0)))
            if unused:
                idle[name] = idle.get(name, 0) + unused
    return idle


def reserved_total(state: CoreState) -> dict[str, int]:
    """Per resource, the room kept for reservations on all nodes (the metric's gauge)."""
    total: dict[str, int] = {}
    for reservation in state.reservations.by_ask.values():
        for name, amount in reservation.resource.items():
            total[name] = total.get(name, 0) + amount
    return total
