"""What every `herder` command shares (shim/command.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from shim.cli import main
from shim.command import YOUNG_COLLECTION_THRESHOLD


@pytest.fixture
def default_gc_thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield saved
    gc.set_threshold(*saved)


def test_herder_scans_young_objects_less_often_and_keeps_the_older_generations(
    default_gc_thresholds: tuple[int, int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])
    assert gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD, 10, 10)
    assert gc.isenabled()
