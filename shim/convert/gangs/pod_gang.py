"""What one pod says about its gang, whichever API it was read from (core/gang/spec.py)."""

from __future__ import annotations

from dataclasses import dataclass

from core.gang.spec import GangSpec


@dataclass(frozen=True, slots=True)
class PodGang:
    """The task group the pod belongs to, the gang it defines (if any), whether it is a
    placeholder Herder made, and what of its gang's definition was ignored for a default
    (each said as a warning Event on the pod; never a reason to wait)."""

    task_group: str = ""
    spec: GangSpec | None = None
    placeholder: bool = False
    notices: tuple[str, ...] = ()
