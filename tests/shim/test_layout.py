"""The shim's layout holds: only `write/` and `admission/` talk back to the API server, no shim
module imports another in a circle, the container image carries no bench or test code, and the
conversion room is one package whose map names every module in it.

import-linter (pyproject.toml) checks which room may import which; it cannot tell a read from a
write, since both go through the same client classes, so the first test reads every module's
calls with `ast`.
"""

from __future__ import annotations

import ast
import fnmatch
import re
import subprocess
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "shim"
WRITERS = ("shim/kube/write/", "shim/kube/admission/")
# No API server there: the simulator plays a cluster in memory, the benches drive their own emulator.
NO_API_SERVER = ("shim/sim/", "shim/bench/")
WRITE_VERBS = re.compile(r"^(create|patch|replace|delete)_(?!task$)\w+$")  # asyncio's create_task is no write
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def _writes(path: Path) -> list[str]:
    """Calls in a module that write to an API server: the client's create_/patch_/replace_/delete_
    methods, or an HTTP request whose method is a write."""
    found: list[str] = []
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and WRITE_VERBS.match(node.func.attr):
            found.append(f"{node.lineno}: .{node.func.attr}()")
        arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
        for argument in arguments:
            if isinstance(argument, ast.Constant) and argument.value in WRITE_METHODS:
                found.append(f"{node.lineno}: {argument.value} request")
    return found


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_only_write_and_admission_send_writes_to_the_api_server() -> None:
    modules = sorted(SHIM.rglob("*.py"))
    writers = [path for path in modules if _relative(path).startswith(WRITERS)]
    others = [path for path in modules if not _relative(path).startswith(WRITERS + NO_API_SERVER)]
    # The detector sees the writes Herder does make (bindings, evictions, the Lease, statuses, Events).
    seen = {_relative(path) for path in writers if _writes(path)}
    assert {"shim/kube/write/api.py", "shim/kube/write/lease_store.py", "shim/kube/write/status_api.py"} <= seen
    outside = [f"{_relative(path)}:{write}" for path in others for write in _writes(path)]
    assert not outside, "writes to the API server outside shim/kube/write/: " + "; ".join(outside)


def _circles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """Strongly connected sets of modules under `package` (Tarjan's algorithm, iteratively)."""
    modules = sorted(module for module in graph.modules if module.startswith(package))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in modules:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, targets = work[-1]
            target = next((t for t in targets if t.startswith(package)), None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.find_modules_directly_imported_by(target)))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                circle: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    circle.append(member)
                    if member == module:
                        break
                if len(circle) > 1:
                    circles.append(sorted(circle))
    return circles


def test_no_shim_modules_import_each_other_in_a_circle() -> None:
    # Imports inside functions count; imports under `if TYPE_CHECKING:` never run and do not.
    graph = grimp.build_graph("shim", "core", exclude_type_checking_imports=True)
    assert len([module for module in graph.modules if module.startswith("shim.kube.")]) > 30
    assert _circles(graph, "shim") == []


def _dockerignore() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip().lstrip("/") for line in lines if line.strip() and not line.startswith("#")]


def _ignored(path: str, patterns: list[str]) -> bool:
    parts = path.split("/")
    prefixes = ["/".join(parts[:count]) for count in range(1, len(parts) + 1)]
    for pattern in patterns:
        bare = pattern.removeprefix("**/")
        for prefix in prefixes:
            if fnmatch.fnmatchcase(prefix, pattern):
                return True
            if pattern.startswith("**/") and fnmatch.fnmatchcase(prefix.rsplit("/", 1)[-1], bare):
                return True
    return False


def _image_sources() -> list[str]:
    """The tracked files the Dockerfile's COPY lines take from the build context."""
    copied: list[str] = []
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(word.startswith("--from") for word in words):
            copied.extend(words[1:-1])
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    patterns = _dockerignore()
    return [
        path
        for path in tracked
        if any(path == source or path.startswith(source.rstrip("/") + "/") for source in copied)
        and not _ignored(path, patterns)
    ]


def test_the_container_image_holds_no_bench_or_test_code() -> None:
    sources = _image_sources()
    assert "shim/kube/operator.py" in sources and "core/scheduler.py" in sources
    harness = [
        path
        for path in sources
        if path.startswith(("shim/bench/", "tests/", "e2e/")) or "kmock" in path or "emulator" in path
    ]
    assert harness == []


def _room_modules(package: Path) -> set[str]:
    return {path.name for path in package.glob("*.py") if path.name != "__init__.py"}


def test_the_conversion_room_is_one_package_whose_map_names_every_module() -> None:
    flat = sorted(path.name for path in SHIM.glob("*.py") if path.name.startswith(("convert", "resource_text")))
    assert flat == [], "conversion modules outside shim/convert/: " + ", ".join(flat)
    room = SHIM / "convert"
    for package in (room, room / "gangs"):
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
        unnamed = sorted(name for name in _room_modules(package) if name not in doc)
        assert unnamed == [], f"{_relative(package)}/__init__.py's map leaves out " + ", ".join(unnamed)
    architecture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    unnamed = sorted(name for name in _room_modules(room) | _room_modules(room / "gangs") if name not in architecture)
    assert unnamed == [], "docs/architecture.md's room map leaves out shim/convert/ " + ", ".join(unnamed)
