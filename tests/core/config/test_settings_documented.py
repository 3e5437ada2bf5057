"""Every setting Herder reads has a row in the README's settings table, and every row is a setting.

The table is for people (defaults in words, meanings); this test only keeps its first column
and the settings schema the same set, so a new setting cannot ship undocumented.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.config.settings import Settings

README = Path(__file__).resolve().parents[3] / "README.md"


def _documented_keys() -> set[str]:
    text = README.read_text(encoding="utf-8")
    table = text.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    keys: set[str] = set()
    for line in table.splitlines():
        if line.startswith("| `"):
            first_cell = line.split("|")[1]
            keys.update(re.findall(r"`([^`]+)`", first_cell))
    return keys


def test_the_readme_settings_table_lists_every_setting() -> None:
    missing = sorted(set(Settings().to_dict()) - _documented_keys())
    assert missing == [], f"README.md's settings table lacks {missing}: add a row for each"


def test_every_row_of_the_settings_table_is_a_setting() -> None:
    unknown = sorted(_documented_keys() - set(Settings().to_dict()))
    assert unknown == [], f"README.md's settings table lists {unknown}, which Herder does not read"
