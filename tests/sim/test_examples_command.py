"""The examples ship with Herder: `herder examples` lists them, `herder examples NAME` prints one,
`herder simulate NAME` runs one, from any directory and from a plain (non-editable) install."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shim.cli import main
from tests.sim.scenarios import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(path.stem for path in EXAMPLES.glob("*.yaml"))


def test_herder_examples_lists_every_example_with_its_first_comment_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["examples"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == SHIPPED
    gangs = next(line for line in lines if line.startswith("gangs "))
    assert gangs.split(None, 1)[1] == "Gang scheduling: two 4-worker jobs on 6 free cores, one after the other," + (
        " never both half started."
    )


def test_herder_examples_name_prints_the_scenario_to_copy_and_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["examples", "queue-preemption"]) == 0
    text = capsys.readouterr().out
    assert text == (EXAMPLES / "queue-preemption.yaml").read_text()
    copy = tmp_path / "mine.yaml"
    copy.write_text(text.replace("name: queue-preemption", "name: mine"))
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "mine.yaml", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "mine"


def test_an_unknown_example_is_a_usage_error_naming_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["examples", "gang"]) == 2
    assert "no example named 'gang'; did you mean gangs?" in capsys.readouterr().err
    assert main(["simulate", "queue-preemtion"]) == 2
    assert "cannot read queue-preemtion: No such file or directory; did you mean the example queue-preemption?" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("spelling", ["gangs", "gangs.yaml", "examples/gangs.yaml"])
def test_simulate_runs_an_example_by_name_from_any_directory(
    spelling: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", spelling, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["name"] == "gangs"
    assert report["pods"]["ml/train-b-worker-0"]["bound"] == 60


def test_a_file_of_that_name_wins_over_the_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gangs").write_text("name: my-own\nnodes: []\nworkload: []\n")
    assert main(["simulate", "gangs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "my-own"


def test_examples_live_in_the_package_only() -> None:
    stray = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "examples").glob("*.yaml"))
    assert stray == [], "scenarios belong in shim/sim/examples/ (package data), where an installed Herder has them"


@pytest.mark.slow
def test_a_plain_install_ships_the_examples(tmp_path: Path) -> None:
    # `pip install .` (not editable) of a copy of the sources, as the Dockerfile copies them,
    # then the installed `herder` script run from a directory with no checkout in reach.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for package in ("core", "shim"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "installed"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(source)]
    subprocess.run(pip, check=True, capture_output=True, timeout=240)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    herder = [sys.executable, str(target / "bin" / "herder")]

    def run(*args: str) -> str:
        done = subprocess.run([*herder, *args], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    which = [sys.executable, "-c", "import shim; print(shim.__file__)"]
    where = subprocess.run(which, cwd=elsewhere, env=env, capture_output=True, text=True, check=True)
    assert where.stdout.startswith(str(target)), "the test must run the installed copy, not the checkout"
    assert [line.split()[0] for line in run("examples").splitlines()] == SHIPPED
    assert run("examples", "gangs") == (EXAMPLES / "gangs.yaml").read_text()
    assert json.loads(run("simulate", "gangs", "--json"))["name"] == "gangs"
    # an example that reads files beside it (its trace, a candidate configuration) finds them
    comparison = json.loads(run("simulate", "what-if", "--compare", "what-if/candidate.yaml", "--json"))
    assert "research/sweep-4" in comparison["changed"]


def test_the_files_an_example_reads_print_and_resolve_from_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["examples", "what-if/trace.csv"]) == 0
    assert capsys.readouterr().out == (EXAMPLES / "what-if" / "trace.csv").read_text()
    monkeypatch.chdir(tmp_path)
    for candidate in ("what-if/candidate.yaml", "examples/what-if/candidate.yaml"):
        assert main(["simulate", "what-if", "--compare", candidate, "--json"]) == 0
        assert "research/sweep-4" in json.loads(capsys.readouterr().out)["changed"]
    assert main(["examples", "../core/__init__.py"]) == 2  # nothing outside the examples
