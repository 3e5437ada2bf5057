"""The application state machine (seed 000).

    New --ask--> Accepted --first allocation--> Starting --more/none pending--> Running
    Running/Starting --last allocation gone, nothing pending--> Completing --timeout--> Completed
    Completing --new ask or allocation--> Running         (a pod restarted by its controller)
    New/Accepted --placement refused--> Rejected
    any active state --fail--> Failing --last allocation gone--> Failed

An application counts as running (for queue and user/group maxapplications) from its first
allocation until its last one is gone: in Starting, Running and Failing with allocations.
"""

from __future__ import annotations

from enum import Enum


class AppState(str, Enum):
    NEW = "New"
    ACCEPTED = "Accepted"
    STARTING = "Starting"
    RUNNING = "Running"
    COMPLETING = "Completing"
    COMPLETED = "Completed"
    FAILING = "Failing"
    FAILED = "Failed"
    REJECTED = "Rejected"


TERMINAL = frozenset({AppState.COMPLETED, AppState.FAILED, AppState.REJECTED})

_ALLOWED: dict[AppState, frozenset[AppState]] = {
    AppState.NEW: frozenset({AppState.ACCEPTED, AppState.STARTING, AppState.REJECTED, AppState.FAILING}),
    AppState.ACCEPTED: frozenset({AppState.STARTING, AppState.COMPLETING, AppState.REJECTED, AppState.FAILING}),
    AppState.STARTING: frozenset({AppState.RUNNING, AppState.COMPLETING, AppState.FAILING}),
    AppState.RUNNING: frozenset({AppState.COMPLETING, AppState.FAILING}),
    AppState.COMPLETING: frozenset({AppState.RUNNING, AppState.COMPLETED, AppState.FAILING}),
    AppState.FAILING: frozenset({AppState.FAILED}),
    AppState.COMPLETED: frozenset(),
    AppState.FAILED: frozenset(),
    AppState.REJECTED: frozenset(),
}


class InvalidTransition(RuntimeError):
    pass


def check_transition(current: AppState, target: AppState) -> None:
    if target not in _ALLOWED[current]:
        raise InvalidTransition(f"application cannot go from {current.value} to {target.value}")
