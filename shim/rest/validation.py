"""`POST /ws/v1/validate-conf` work, kept away from everything else the REST server does.

Checking a queues.yaml is the one REST request whose cost a caller chooses. It therefore runs
in a child process of its own (spawned, so it shares no lock or thread with the scheduler),
one at a time, under a time limit after which the child is killed; at most `waiting`
requests queue behind the running one and the rest are refused at once with 429. Nothing of
this touches the readers' thread pool or the event loop, so `/healthz`, `/readyz` and every
GET keep answering while hostile documents are checked.

The YAML itself is read with `core.config.safe_yaml`'s limits, so in practice the time limit
is a backstop, not the first defence.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from core.config import ConfigError, load_config

TIME_LIMIT = 10.0  # seconds one check may take, child start-up included
WAITING = 4  # requests queued behind the running check; more are refused with 429


class ValidatorBusy(Exception):
    """Too many checks already queued; the caller should retry later."""


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"allowed": self.allowed, "reason": self.reason}


def _check_in_child(text: str, answer: Connection) -> None:
    try:
        load_config(text)
    except ConfigError as problem:
        answer.send((False, "; ".join(problem.problems)))
    except Exception as error:  # a bug must still answer, not hang the caller until the time limit
        answer.send((False, f"the configuration could not be checked: {type(error).__name__}: {error}"))
    else:
        answer.send((True, ""))
    answer.close()


def check_in_process(text: str, time_limit: float = TIME_LIMIT) -> Verdict:
    """Run `load_config(text)` in a fresh child process; kill it past `time_limit` seconds."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_check_in_child, args=(text, send), name="herder-validate-conf", daemon=True)
    child.start()
    send.close()
    try:
        if receive.poll(time_limit):
            allowed, reason = receive.recv()
            return Verdict(bool(allowed), str(reason))
        return Verdict(False, f"checking took longer than {time_limit:g}s and was stopped")
    except EOFError:
        return Verdict(False, f"the check ended without an answer (exit code {child.exitcode})")
    finally:
        receive.close()
        if child.is_alive():
            child.kill()
        child.join(5)


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
