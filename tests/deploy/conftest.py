"""Fixtures for the deployment checks: helm from .tools/bin (installed on demand) and chart rendering."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "herder"
HELM = ROOT / ".tools" / "bin" / "helm"
NAMESPACE = "herder-system"

Manifest = dict[str, Any]


@pytest.fixture(scope="session")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., subprocess.CompletedProcess[str]]:
    if not HELM.exists():
        subprocess.run([str(ROOT / ".ci" / "install-tools.sh")], check=True, capture_output=True)
    home = tmp_path_factory.mktemp("helm-home")
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(HELM), *args], env=env, capture_output=True, text=True, timeout=60)

    return run


@pytest.fixture(scope="session")
def render(helm: Callable[..., subprocess.CompletedProcess[str]]) -> Callable[..., list[Manifest]]:
    def run(*sets: str) -> list[Manifest]:
        args = ["template", "herder", str(CHART), "--namespace", NAMESPACE]
        for item in sets:
            args += ["--set", item]
        done = helm(*args)
        assert done.returncode == 0, done.stderr
        return [doc for doc in yaml.safe_load_all(done.stdout) if doc]

    return run
