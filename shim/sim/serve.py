"""`herder simulate SCENARIO --serve`: the scenario on a clock you can watch, served as Herder serves a cluster.

The simulation plays on the calling thread, each simulated second taking `1 / speed` seconds
of wall time (`Pacer`; real time by default). Meanwhile the operator's own REST server
(`shim.rest.RestThread`, on its own thread) reads the simulation's scheduler: the REST API, the
event stream and /metrics answer about the simulated cluster, so `herder explain`, YuniKorn's
web UI and Prometheus work with no cluster. Between two moments of the scenario nothing
changes, as between two events in a cluster. Times in the answers count from the moment the
command started, in simulated seconds (the scheduler's epoch is that moment).

When the scenario is over its summary (or report) is printed as without `--serve`, and the
final state stays served until Ctrl+C.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from core.scheduler import Scheduler
from shim.command import EXIT_USAGE
from shim.metrics import ShimMetrics
from shim.rest import RestStatus, RestThread
from shim.sim.engine import Progress, Simulation
from shim.sim.scenario import Scenario

IDENTITY = "herder-simulate"
INTERRUPTED = 130  # the scenario was stopped before its end (Ctrl+C), as a shell reports SIGINT
IDLE_WAIT = 3600.0  # seconds per sleep while only serving (Ctrl+C ends it at once)


@dataclass(frozen=True, slots=True)
class ServeOptions:
    speed: float = 1.0  # simulated seconds per wall second
    address: str = "127.0.0.1"
    port: int = 9080


@dataclass(frozen=True, slots=True)
class SimulationBackend:
    """What the REST server reads (a `shim.rest.RestBackend`). No shim metrics: a simulated
    cluster binds and evicts without an API server, so there are no bind times to report."""

    scheduler: Scheduler
    status: RestStatus
    metrics: ShimMetrics | None = field(default=None)


class Pacer:
    """Holds the simulation back until the wall clock reaches `start + t / speed`."""

    def __init__(
        self,
        speed: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._speed = speed
        self._clock = clock
        self._sleep = sleep
        self._start = clock()

    def __call__(self, t: float) -> None:
        delay = self._start + t / self._speed - self._clock()
        if delay > 0:
            self._sleep(delay)


def serve_simulation(
    scenario: Scenario, options: ServeOptions, progress: Progress | None, show: Callable[[Simulation], int]
) -> int:
    """Serve `scenario` while it plays; `show` prints the summary or report once it is over."""
    simulation = Simulation(scenario, progress, epoch=time.time())
    status = RestStatus(identity=IDENTITY, synced=True, leader=True)
    server = RestThread(SimulationBackend(simulation.scheduler, status), options.address, options.port)
    try:
        server.start()
    except OSError as err:
        print(
            f"herder simulate: cannot serve on {options.address}:{options.port}: {err.strerror or err}"
            " (another Herder, or a port-forward, may hold it: --port chooses another)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    url = f"http://{options.address}:{server.port}"
    print(
        f"herder simulate: serving {scenario.name} at {options.speed:g}x real time: REST API, event stream"
        f" and /metrics on {url} (herder explain --url {url} NAMESPACE/POD); Ctrl+C stops",
        file=sys.stderr,
        flush=True,
    )
    code = INTERRUPTED
    try:
        simulation.run(Pacer(options.speed))
    except KeyboardInterrupt:
        print(f"herder simulate: stopped at t={simulation.now:g} s, before the end", file=sys.stderr)
        server.stop()
        return code
    try:
        code = show(simulation)
        print(
            f"herder simulate: the scenario is over at t={simulation.now:g} s; its final state stays on {url}"
            " until Ctrl+C",
            file=sys.stderr,
            flush=True,
        )
        while True:
            time.sleep(IDLE_WAIT)
    except KeyboardInterrupt:
        return code  # Ctrl+C is how a served simulation ends once it has played
    finally:
        server.stop()
