"""The example scenarios Herder ships: `herder examples [NAME]` and `herder simulate NAME`.

The YAML files beside this module are package data, so an installed Herder has them, not only
a source checkout. An example's name is its file name without `.yaml`; its description is the
text of its first comment line. Files an example reads (a trace, a candidate configuration)
sit in a directory named after it. `find_example` and `example_file` also take the spelling
the documentation used before the examples moved into the package, `examples/NAME.yaml`.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from shim.command import EXIT_OK, EXIT_USAGE

SUFFIX = ".yaml"
OLD_DIRECTORY = "examples/"  # where the examples lived in a source checkout


@dataclass(frozen=True, slots=True)
class Example:
    name: str
    description: str
    resource: Traversable

    def text(self) -> str:
        return self.resource.read_text(encoding="utf-8")


class UnknownExample(LookupError):
    """No example has that name; the message names the closest ones."""


def _description(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and stripped.strip("# "):
            return stripped.lstrip("#").strip()
        if stripped and not stripped.startswith("#"):
            break
    return ""


def examples() -> list[Example]:
    """Every shipped example, by name."""
    found = []
    for entry in resources.files(__name__).iterdir():
        if entry.is_file() and entry.name.endswith(SUFFIX):
            name = entry.name[: -len(SUFFIX)]
            found.append(Example(name, _description(entry.read_text(encoding="utf-8")), entry))
    return sorted(found, key=lambda example: example.name)


def example_name(spelling: str) -> str:
    """`gangs`, `gangs.yaml` and `examples/gangs.yaml` all name the example `gangs`."""
    name = spelling.strip()
    if name.startswith(OLD_DIRECTORY):
        name = name[len(OLD_DIRECTORY) :]
    return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name


def find_example(spelling: str) -> Example:
    """The example `spelling` names; UnknownExample (saying which are close) when none does."""
    wanted = example_name(spelling)
    shipped = {example.name: example for example in examples()}
    if wanted in shipped:
        return shipped[wanted]
    close = difflib.get_close_matches(wanted, list(shipped), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise UnknownExample(f"no example named {wanted!r}{hint} (`herder examples` lists them)")


def example_file(spelling: str) -> Path | None:
    """The shipped file `spelling` names, as a file on disk: an example (`gangs`, `gangs.yaml`,
    `examples/gangs.yaml`) or a file an example reads (`examples/what-if/candidate.yaml`)."""
    relative = spelling.strip()
    if relative.startswith(OLD_DIRECTORY):
        relative = relative[len(OLD_DIRECTORY) :]
    parts = [part for part in relative.split("/") if part]
    if not parts or any(part in (".", "..") for part in parts):
        return None
    if len(parts) == 1 and "." not in parts[0]:
        parts[0] += SUFFIX
    entry = resources.files(__name__).joinpath(*parts)
    return entry if isinstance(entry, Path) and entry.is_file() else None


def close_examples(spelling: str) -> list[str]:
    """Example names close to `spelling` (for the hint when a scenario file is missing)."""
    names = [example.name for example in examples()]
    return difflib.get_close_matches(example_name(spelling.rsplit("/", 1)[-1]), names, n=3, cutoff=0.6)


def examples_command(args: argparse.Namespace) -> int:
    """`herder examples`: one line each; `herder examples NAME`: the scenario's YAML, to copy and edit."""
    if args.name is None:
        shipped = examples()
        width = max((len(example.name) for example in shipped), default=0)
        for example in shipped:
            print(f"{example.name:<{width}}  {example.description}")
        print("run one: herder simulate NAME; copy one to edit: herder examples NAME > my.yaml", file=sys.stderr)
        return EXIT_OK
    try:
        text = find_example(args.name).text()
    except UnknownExample as err:
        other = example_file(args.name)  # a file an example reads (what-if/candidate.yaml)
        if other is None:
            print(f"herder examples: {err}", file=sys.stderr)
            return EXIT_USAGE
        text = other.read_text(encoding="utf-8")
    sys.stdout.write(text)
    return EXIT_OK


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "examples", help="list the example scenarios shipped with Herder, or print one (to copy and edit)"
    )
    parser.add_argument("name", nargs="?", help="the example to print (as YAML, ready for `herder simulate`)")
    parser.set_defaults(handler=examples_command)
