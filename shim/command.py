"""What every `herder` command shares: the version, the exit codes and `--set` parsing.

It sits below the CLI, the operator and the simulator, so each of them can use these without
importing `shim/cli.py`, which only the `herder` entry point imports.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from core.config import SettingsError

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2


def herder_version() -> str:
    try:
        return version("herder")
    except PackageNotFoundError:
        return "0+unknown"


def parse_set_options(pairs: Sequence[str]) -> dict[str, str]:
    """`--set key=value` options as a settings map; a pair without `=` is a usage error."""
    values: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"--set {pair}: expected key=value")
        values[key.strip()] = value
    return values
