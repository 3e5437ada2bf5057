"""The CI tool installer provides the pinned helm and kubectl and is safe to run again."""

from __future__ import annotations

import subprocess

from tests.deploy.conftest import HELM, ROOT


def test_installer_is_idempotent_and_pins_versions(helm: object) -> None:
    before = HELM.stat().st_mtime_ns
    done = subprocess.run(
        [str(ROOT / ".ci" / "install-tools.sh")], capture_output=True, text=True, timeout=120, check=True
    )
    assert HELM.stat().st_mtime_ns == before
    assert "v3.19.0" in done.stdout
    assert "v1.37.1" in done.stdout
