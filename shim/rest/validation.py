"""`POST /ws/v1/validate-conf` work, kept away from everything else the REST server does.

Checking a queues.yaml is the one REST request whose cost a caller chooses. It therefore runs
in a child interpreter of its own (so it shares no lock, thread or memory with the scheduler),
one at a time, under a time limit after which the child is killed; at most `waiting`
requests queue behind the running one and the rest are refused at once with 429. Nothing of
this touches the readers' thread pool or the event loop, so `/healthz`, `/readyz` and every
GET keep answering while hostile documents are checked.

The YAML itself is read with `core.config.safe_yaml`'s limits, so in practice the time limit
is a backstop, not the first defence.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TIME_LIMIT = 10.0  # seconds one check may take, child start-up included
WAITING = 4  # requests queued behind the running check; more are refused with 429
_ROOT = Path(__file__).resolve().parents[2]  # the directory holding `core` and `shim`


class ValidatorBusy(Exception):
    """Too many checks already queued; the caller should retry later."""


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    reason: str
    warnings: tuple[str, ...] = ()  # accepted, but read differently from how it looks

    def to_dict(self) -> dict[str, Any]:
        answer: dict[str, Any] = {"allowed": self.allowed, "reason": self.reason}
        if self.warnings:
            answer["warnings"] = list(self.warnings)
        return answer


def check_in_process(text: str, time_limit: float = TIME_LIMIT) -> Verdict:
    """Run `load_config(text)` in a fresh `python -m core.config`; kill it past `time_limit`.

    A new interpreter, not multiprocessing: it shares nothing with the scheduler's process and
    does not depend on how that process was started (its `__main__`).
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "core.config"],
            input=text.encode("utf-8"),
            capture_output=True,
            timeout=time_limit,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Verdict(False, f"checking took longer than {time_limit:g}s and was stopped")
    except OSError as error:
        return Verdict(False, f"the configuration could not be checked: {error}")
    try:
        allowed, reason, warnings = json.loads(done.stdout)
    except ValueError:
        return Verdict(False, f"the check ended without an answer (exit code {done.returncode})")
    return Verdict(bool(allowed), str(reason), tuple(str(warning) for warning in warnings))


class ConfigValidator:
    """One check at a time, `waiting` more queued, the rest refused (`ValidatorBusy`)."""

    def __init__(self, time_limit: float = TIME_LIMIT, waiting: int = WAITING) -> None:
        self.time_limit = time_limit
        self.waiting = waiting
        self._admitted = asyncio.Semaphore(1 + waiting)  # the running check and those queued
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="herder-validate-conf")

    async def check(self, text: str) -> Verdict:
        if self._admitted.locked():
            raise ValidatorBusy(f"{1 + self.waiting} configuration checks are already running or waiting")
        async with self._admitted:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._worker, check_in_process, text, self.time_limit)

    def close(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)
