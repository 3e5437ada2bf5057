"""`herder simulate SCENARIO`: load, run, and show or write the report.

SCENARIO is a file, or the name of a shipped example (`shim.sim.examples`). With `--serve` the
run is paced and served over REST while it plays (`shim.sim.serve`).

Exit codes: 0 the scenario ran (whatever happened inside it: a pod that cannot run is a
result, not an error); 1 the scenario is invalid (every problem listed on stderr); 2 the
command line is wrong or a file cannot be read or written. A progress line goes to stderr
only when stderr is a terminal and `--quiet` is not given, so `--json` output stays clean.
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import sys
import time
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from core.config import SettingsError
from shim.command import EXIT_INVALID, EXIT_OK, EXIT_USAGE, parse_set_options
from shim.sim.charts import ChartsUnavailable, write_charts
from shim.sim.cluster import PENDING, RUNNING, SimCluster
from shim.sim.engine import Simulation
from shim.sim.examples import UnknownExample, close_examples, find_example
from shim.sim.report import build_report
from shim.sim.scenario import Scenario, ScenarioError, load_scenario
from shim.sim.serve import ServeOptions, serve_simulation
from shim.sim.summary import human_summary

REPORT_FILE = "report.json"
BAR_WIDTH = 30


class ProgressLine:
    """`[#####.....] 120/600 s  running 12  pending 3`, redrawn at most ten times a second."""

    def __init__(self, stream: TextIO, horizon: float | None, exact: bool) -> None:
        self._stream = stream
        self._horizon = horizon
        self._of = f"/{horizon:.0f} s" if exact else f" s of ~{horizon:.0f} s"
        self._drawn = 0.0

    def __call__(self, now: float, cluster: SimCluster) -> None:
        wall = time.monotonic()
        if wall - self._drawn < 0.1:
            return
        self._drawn = wall
        counts = f"running {cluster.counts[RUNNING]}  pending {cluster.counts[PENDING]}"
        if self._horizon:
            done = min(1.0, now / self._horizon)
            bar = "#" * int(done * BAR_WIDTH)
            self._stream.write(f"\r[{bar:<{BAR_WIDTH}}] {now:.0f}{self._of}  {counts}  ")
        else:
            self._stream.write(f"\r{now:.0f} s simulated  {counts}  ")
        self._stream.flush()

    def close(self) -> None:
        if self._drawn:
            self._stream.write("\r" + " " * (BAR_WIDTH + 60) + "\r")
            self._stream.flush()


def _horizon(scenario: Scenario) -> float | None:
    """How far the run goes: `until`, else the last arrival, event or snapshot (a guess)."""
    if scenario.until is not None:
        return scenario.until
    moments = [w.at + (w.duration or 0) for w in scenario.workload]
    moments += [e.at for e in scenario.events] + list(scenario.snapshots)
    return max(moments, default=0.0) or None


def _fail(message: str, problems: list[str] | None = None) -> None:
    print(f"herder simulate: {message}", file=sys.stderr)
    for problem in problems or []:
        print(f"  - {problem}", file=sys.stderr)


def _json(report: dict[str, Any], indent: int) -> str:
    """The report as JSON: compact unless asked for indentation (reports reach tens of MB)."""
    if indent > 0:
        return json.dumps(report, indent=indent)
    return json.dumps(report, separators=(",", ":"))


def _load(spelling: str, overrides: dict[str, str]) -> Scenario:
    """The scenario file `spelling` names, else the shipped example of that name (`gangs`,
    `examples/gangs.yaml`); OSError (with a hint) when neither exists."""
    path = Path(spelling)
    if path.exists():
        return load_scenario(path, overrides)
    try:
        example = find_example(spelling)
    except UnknownExample:
        close = close_examples(spelling)
        hint = "; `herder examples` lists the examples"
        if close:
            hint = f"; did you mean the example {' or '.join(close)}?"
        raise FileNotFoundError(errno.ENOENT, f"No such file or directory{hint}") from None
    with resources.as_file(example.resource) as file:
        return load_scenario(file, overrides)


def simulate_command(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    try:
        overrides = parse_set_options(args.set or [])
    except SettingsError as err:
        _fail("bad --set option:", err.problems)
        return EXIT_USAGE
    try:
        scenario = _load(args.scenario, overrides)
    except OSError as err:
        _fail(f"cannot read {path}: {err.strerror}")
        return EXIT_USAGE
    except ScenarioError as err:
        _fail(f"{path} is not a valid scenario:", err.problems)
        return EXIT_INVALID
    except SettingsError as err:
        _fail("bad --set option:", [f"--set {problem}" for problem in err.problems])
        return EXIT_USAGE

    serve = _serve_options(args)
    if isinstance(serve, str):
        _fail(serve)
        return EXIT_USAGE
    progress = None
    if sys.stderr.isatty() and not args.quiet:
        progress = ProgressLine(sys.stderr, _horizon(scenario), exact=scenario.until is not None)
    show = partial(_show, args=args, progress=progress)
    if serve is not None:
        return serve_simulation(scenario, serve, progress, show)
    simulation = Simulation(scenario, progress)
    simulation.run()
    return show(simulation)


def _serve_options(args: argparse.Namespace) -> ServeOptions | str | None:
    """`--serve` and its options; a string says what is wrong with them."""
    speed, port, address = (getattr(args, name, None) for name in ("speed", "port", "address"))
    if not getattr(args, "serve", False):
        flags = {"--speed": speed, "--port": port, "--address": address}
        given = [flag for flag, value in flags.items() if value is not None]
        return f"{', '.join(given)} only with --serve" if given else None
    options = ServeOptions()
    if speed is not None and not (math.isfinite(speed) and speed > 0):
        return f"--speed {speed:g}: must be a number above 0 (simulated seconds per second)"
    if port is not None and not 0 <= port <= 65535:
        return f"--port {port}: must be from 0 (any free port) to 65535"
    return ServeOptions(
        speed=options.speed if speed is None else speed,
        address=address or options.address,
        port=options.port if port is None else port,
    )


def _show(simulation: Simulation, args: argparse.Namespace, progress: ProgressLine | None) -> int:
    """The summary, or the report on stdout and/or into `--out`, once the run is over."""
    if progress is not None:
        progress.close()
    report = build_report(simulation)

    notes = sys.stderr if args.json else sys.stdout
    if args.out:
        directory = Path(args.out)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            (directory / REPORT_FILE).write_text(_json(report, args.indent) + "\n")
        except OSError as err:
            _fail(f"cannot write the report into {directory}: {err.strerror}")
            return EXIT_USAGE
        written = [directory / REPORT_FILE]
        try:
            written += write_charts(report, directory)
        except ChartsUnavailable as err:
            print(f"herder simulate: no charts: {err}", file=sys.stderr)
        print("wrote " + ", ".join(str(p) for p in written), file=notes)
    try:
        print(_json(report, args.indent) if args.json else human_summary(report))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader (`| head`) stopped early: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK
