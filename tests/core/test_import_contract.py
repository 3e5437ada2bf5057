"""The core stays pure: no module under core/ imports Kubernetes, kopf, aiohttp, the Prometheus
client or the shim, so it runs, is tested and is simulated with no cluster at all (DESIGN).

This reads every module's source with `ast`, so it also catches imports inside functions and
`TYPE_CHECKING` blocks that import-linter's graph may miss, and it needs no import-linter run.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"
FORBIDDEN = ("kubernetes", "kopf", "aiohttp", "prometheus_client", "shim")


def _modules() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    names: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.append((node.lineno, node.args[0].value))
    return names


def test_no_core_module_imports_kubernetes_kopf_aiohttp_prometheus_or_the_shim() -> None:
    modules = _modules()
    assert len(modules) > 20, f"expected the core's modules under {CORE}"
    bad = [
        f"{path.relative_to(CORE.parent)}:{line} imports {name}"
        for path in modules
        for line, name in _imported(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        if name.split(".")[0] in FORBIDDEN
    ]
    assert not bad, "the core must stay pure: " + "; ".join(bad)
