"""`herder simulate SCENARIO`: load, run, and show or write the report (or, with `--compare
CANDIDATE`, run it twice and show what the candidate changes: shim/sim/compare.py).

SCENARIO is a file, or a shipped example (`shim.sim.examples`) by name. With `--serve` the run
is paced and served over REST while it plays (`shim.sim.serve`).

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
from pathlib import Path
from typing import Any, TextIO

import yaml

from core.config import SettingsError
from core.config.safe_yaml import load_yaml
from shim.command import EXIT_INVALID, EXIT_OK, EXIT_USAGE, parse_set_options, read_user_text
from shim.sim.candidate import apply_candidate
from shim.sim.charts import ChartsUnavailable, write_charts, write_comparison_charts
from shim.sim.cluster import PENDING, RUNNING, SimCluster
from shim.sim.compare import compare_reports, comparison_summary
from shim.sim.engine import Simulation
from shim.sim.examples import close_examples, example_file
from shim.sim.report import build_report
from shim.sim.scenario import Scenario, ScenarioError, parse_scenario, read_scenario_document
from shim.sim.serve import ServeOptions, serve_simulation
from shim.sim.summary import human_summary

REPORT_FILE = "report.json"
COMPARISON_FILE = "comparison.json"
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


def _given_path(spelling: str) -> Path:
    """The file `spelling` names, else the shipped example file it names (`gangs`,
    `examples/gangs.yaml`, `examples/what-if/candidate.yaml`); FileNotFoundError, with a hint,
    when neither exists."""
    path = Path(spelling)
    if path.exists():
        return path
    shipped = example_file(spelling)
    if shipped is not None:
        return shipped
    close = close_examples(spelling)
    hint = f"; did you mean the example {' or '.join(close)}?" if close else "; `herder examples` lists the examples"
    raise FileNotFoundError(errno.ENOENT, f"No such file or directory{hint}")


def _scenario_document(args: argparse.Namespace, path: Path) -> object:
    """The scenario's YAML, with `--trace FILE` as its `trace` (read from where the command runs)."""
    document = read_scenario_document(path)
    if getattr(args, "trace", None) and isinstance(document, dict):
        document = {**document, "trace": str(Path(args.trace).resolve())}
    return document


def _progress(scenario: Scenario, args: argparse.Namespace) -> ProgressLine | None:
    if sys.stderr.isatty() and not args.quiet:
        return ProgressLine(sys.stderr, _horizon(scenario), exact=scenario.until is not None)
    return None


def _run(scenario: Scenario, args: argparse.Namespace) -> dict[str, Any]:
    progress = _progress(scenario, args)
    simulation = Simulation(scenario, progress)
    simulation.run()
    if progress is not None:
        progress.close()
    return build_report(simulation)


def _write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text + "\n")
    return path


def _show(text: str) -> None:
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader (`| head`) stopped early: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def simulate_command(args: argparse.Namespace) -> int:
    path = Path(args.scenario)
    try:
        overrides = parse_set_options(args.set or [])
    except SettingsError as err:
        _fail("bad --set option:", err.problems)
        return EXIT_USAGE
    try:
        found = _given_path(args.scenario)
        document = _scenario_document(args, found)
        scenario = parse_scenario(document, found.stem, overrides, found.parent)
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
    if getattr(args, "compare", None):
        if serve is not None:
            _fail("--serve plays one scenario; --compare runs two: give one of them")
            return EXIT_USAGE
        return _compare_command(args, found, document, scenario, overrides)

    progress = _progress(scenario, args)
    finish = partial(_finish, args=args, progress=progress)
    if serve is not None:
        return serve_simulation(scenario, serve, progress, finish)
    simulation = Simulation(scenario, progress)
    simulation.run()
    return finish(simulation)


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


def _finish(simulation: Simulation, args: argparse.Namespace, progress: ProgressLine | None) -> int:
    """The summary, or the report on stdout and/or into `--out`, once the run is over."""
    if progress is not None:
        progress.close()
    report = build_report(simulation)
    notes = sys.stderr if args.json else sys.stdout
    if args.out:
        directory = Path(args.out)
        try:
            written = [_write(directory, REPORT_FILE, _json(report, args.indent))]
        except OSError as err:
            _fail(f"cannot write the report into {directory}: {err.strerror}")
            return EXIT_USAGE
        try:
            written += write_charts(report, directory)
        except ChartsUnavailable as err:
            print(f"herder simulate: no charts: {err}", file=sys.stderr)
        print("wrote " + ", ".join(str(p) for p in written), file=notes)
    _show(_json(report, args.indent) if args.json else human_summary(report))
    return EXIT_OK


def _compare_command(
    args: argparse.Namespace, path: Path, document: object, baseline: Scenario, overrides: dict[str, str]
) -> int:
    """Run the scenario as it is and under the candidate; show what changes."""
    candidate_path = Path(args.compare)
    try:
        candidate_path = _given_path(args.compare)
        candidate_source = load_yaml(read_user_text(candidate_path))
        patched = apply_candidate(document if isinstance(document, dict) else {}, candidate_source)
        candidate = parse_scenario(patched, path.stem, overrides, path.parent)
    except OSError as err:
        _fail(f"cannot read {candidate_path}: {err.strerror}")
        return EXIT_USAGE
    except (ScenarioError, SettingsError) as err:
        _fail(f"{candidate_path} cannot be applied to {path}:", err.problems)
        return EXIT_INVALID
    except (yaml.YAMLError, ValueError) as err:
        _fail(f"{candidate_path} is not a readable YAML file: {err}")
        return EXIT_INVALID
    reports = {"baseline": _run(baseline, args), "candidate": _run(candidate, args)}
    comparison = compare_reports(reports["baseline"], reports["candidate"])
    notes = sys.stderr if args.json else sys.stdout
    if args.out:
        directory = Path(args.out)
        try:
            written = [_write(directory, COMPARISON_FILE, _json(comparison, args.indent))]
            for side, report in reports.items():
                written.append(_write(directory / side, REPORT_FILE, _json(report, args.indent)))
        except OSError as err:
            _fail(f"cannot write the reports into {directory}: {err.strerror}")
            return EXIT_USAGE
        try:
            for side, report in reports.items():
                written += write_charts(report, directory / side)
            written += write_comparison_charts(reports["baseline"], reports["candidate"], comparison, directory)
        except ChartsUnavailable as err:
            print(f"herder simulate: no charts: {err}", file=sys.stderr)
        print("wrote " + ", ".join(str(p) for p in written), file=notes)
    _show(_json(comparison, args.indent) if args.json else comparison_summary(comparison))
    return EXIT_OK
