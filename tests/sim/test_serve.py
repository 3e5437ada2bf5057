"""`herder simulate SCENARIO --serve`: the scenario plays on a paced clock while Herder's own REST
server answers about it, so `herder explain`, the event stream and /metrics work with no cluster.

The main test runs the command the issue names, `herder simulate examples/queue-preemption.yaml
--serve --speed 20`, as a process of its own from a directory without the examples: ml's pods
ask at t=60 (3 s in), ml-8 and ml-9 wait until t=690 (34.5 s in).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from shim.cli import main
from shim.sim.serve import Pacer

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")
NOT_1970 = 1_700_000_000 * 10**9  # Unix nanoseconds of November 2023: a time the run stamped itself


def _eventually(probe: Callable[[], T | None], what: str, timeout: float = 30.0) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value is not None:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as answer:
        body: bytes = answer.read()
        return body


class Served:
    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url

    def json(self, path: str) -> Any:
        return json.loads(_get(self.url + path))

    def found(self, path: str) -> Any:
        """The answer, or None while it is a 404 (the pod or application has not come yet)."""
        try:
            return self.json(path)
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise

    def stop(self) -> tuple[int, str]:
        """Ctrl+C; the exit code and what it printed on stdout that was not read yet."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=30)
        assert self.process.stdout is not None
        return code, self.process.stdout.read()


def _as_in_a_terminal() -> None:
    """Ctrl+C reaches the served simulation as in a terminal's foreground, even when the suite
    itself runs in the background (a shell's background job starts with SIGINT ignored, and a
    child inherits that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> Served:
        command = [sys.executable, "-m", "shim.cli", "simulate", *args, "--serve", "--port", "0", "--quiet"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen(
            command,
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_as_in_a_terminal,
        )
        started.append(process)
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"on (http://127\.0\.0\.1:\d+) ", line)
        assert found, f"no address in {line!r}"
        return Served(process, found.group(1))

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def test_explain_metrics_and_events_answer_while_the_scenario_plays(
    serve: Callable[..., Served], capsys: pytest.CaptureFixture[str]
) -> None:
    served = serve("examples/queue-preemption.yaml", "--speed", "20")

    def waiting() -> dict[str, Any] | None:
        doc = served.found("/ws/v1/partition/default/explain?pod=ml/ml-9")
        return doc if doc and doc["waiting"] == 2 else None  # after t=90: ml-0 .. ml-7 run

    _eventually(waiting, "ml/ml-9 to wait in root.ml")
    assert main(["explain", "ml/ml-9", "--url", served.url]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ml/ml-9 (application training, queue root.ml): waiting, 2nd of 2 in its queue's line")
    assert "held by:" in out

    metrics = _get(served.url + "/metrics").decode()
    for family in ("herder_pending_pods", "herder_queue_allocated_resource", "herder_scheduling_cycles_total"):
        assert f"\n# TYPE {family} " in metrics, family
    for sample in (
        "herder_ready 1.0",
        "herder_leader 1.0",
        "herder_nodes 2.0",
        "herder_pending_pods 2.0",  # ml-8 and ml-9
        'herder_preemptions_total{queue="root.batch",reason="guarantee"} 8.0',
    ):
        assert f"\n{sample}\n" in metrics, sample

    with urllib.request.urlopen(served.url + "/ws/v1/events/stream?count=3", timeout=10) as stream:
        lines = [json.loads(stream.readline()) for _ in range(4)]
    assert "InstanceUUID" in lines[0]
    assert all(record["timestampNano"] > NOT_1970 for record in lines[1:])
    [app] = served.json("/ws/v1/partition/default/queue/root.ml/applications")
    assert app["submissionTime"] > NOT_1970

    code, _ = served.stop()
    assert code == 130  # stopped before the scenario's end (t=1831, 91.5 s in)


def test_the_final_state_stays_served_after_the_summary(serve: Callable[..., Served]) -> None:
    served = serve("gangs", "--speed", "2000")  # 240 simulated seconds in an eighth of a second
    assert served.process.stdout is not None
    first = served.process.stdout.readline()  # the summary: the run is over
    assert first.startswith("gangs: 240 s simulated in ")
    apps = {app["applicationID"]: app for app in served.json("/ws/v1/partition/default/applications")}
    assert apps["mpi-c"]["applicationState"] == "Failed"
    assert apps["train-b"]["applicationState"] == "Completed"
    assert served.process.stderr is not None
    assert "the scenario is over at t=240 s" in served.process.stderr.readline()  # the summary is all out
    code, rest = served.stop()
    assert code == 0
    assert rest.startswith("Herder's pods: 15")


def test_a_port_taken_is_named_and_nothing_runs(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["simulate", "gangs", "--serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"cannot serve on 127.0.0.1:{port}" in err and "--port chooses another" in err


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--serve", "--speed", "0"], "--speed 0: must be a number above 0"),
        (["--serve", "--speed", "nan"], "--speed nan: must be a number above 0"),
        (["--serve", "--port", "70000"], "--port 70000: must be from 0"),
        (["--speed", "10"], "--speed only with --serve"),
        (["--port", "0"], "--port only with --serve"),
    ],
)
def test_serve_options_are_checked(args: list[str], problem: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "gangs", *args]) == 2
    assert problem in capsys.readouterr().err


def test_the_pacer_lets_simulated_second_t_happen_t_over_speed_seconds_in() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    pace = Pacer(20.0, clock=lambda: now[0], sleep=sleep)
    pace(60.0)  # 3 s in
    now[0] += 1.0  # the moment's own work took a second
    pace(90.0)  # 4.5 s in: 0.5 s more
    pace(80.0)  # already past: no wait
    assert slept == [pytest.approx(3.0), pytest.approx(0.5)]
