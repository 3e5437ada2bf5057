"""What every `herder` command shares: the version, exit codes, `--set` parsing, reading a user's file.

It sits below the CLI, the operator and the simulator, so each of them can use these without
importing `shim/cli.py`, which only the `herder` entry point imports.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from core.config import SettingsError
from core.config.safe_yaml import MAX_BYTES

# The cyclic collector's youngest generation is scanned every this many net allocations
# (CPython's default is 700).
YOUNG_COLLECTION_THRESHOLD = 10_000

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


def read_user_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """A user's file as text; OSError if unreadable, ValueError if too big or not UTF-8."""
    with path.open("rb") as handle:
        raw = handle.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise ValueError(f"{path} is larger than {max_bytes} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} is not UTF-8 text (byte {err.start})") from None


def collect_garbage_less_often() -> None:
    """Scan the youngest generation every 10,000 allocations instead of 700.

    A scheduling decision allocates a few dozen objects (an allocation, events, sums) that mostly
    die by reference counting; with CPython's default the cyclic collector ran about 390 times for
    50,000 decisions and took 15% of the cycle's CPU (`herder bench`, 5,000 nodes). The older
    generations keep their default ratios, so a full collection still follows the same growth.
    """
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, oldest)


def freeze_long_lived() -> None:
    """Move every object alive now out of the cyclic collector's generations (`gc.freeze`).

    Called once the start-up state is built (`herder run` after its initial sync, the benches
    after their setup): the cluster's nodes, pods, queues and applications live for the run,
    and each collection of the oldest generation would otherwise walk all of them again. What
    is created later is collected as usual. No collection runs first: a full one takes about
    half a second at 50,000 pods, holding every thread, for the little cyclic garbage the sync
    leaves (it reads JSON into plain dicts, freed as soon as they are converted). That garbage,
    and a frozen object that later becomes part of an unreachable cycle (a queue removed from
    the tree, say), is freed only when the process ends.
    """
    gc.freeze()
