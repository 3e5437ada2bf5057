"""The chart's webhook configurations call exactly the endpoints the operator serves, for the
resources and operations each handler reviews."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shim.kube.admission.webhooks import ROUTES

Manifest = dict[str, Any]
KINDS = {"ValidatingWebhookConfiguration": True, "MutatingWebhookConfiguration": False}


def _webhooks(manifests: list[Manifest]) -> list[tuple[bool, Manifest]]:
    return [(KINDS[m["kind"]], hook) for m in manifests if m["kind"] in KINDS for hook in m["webhooks"]]


def test_every_chart_webhook_calls_a_handler_for_what_it_reviews(render: Callable[..., list[Manifest]]) -> None:
    routes = {f"/{route.id}": route for route in ROUTES}
    seen = set()
    for validating, hook in _webhooks(render()):
        path = hook["clientConfig"]["service"]["path"]
        assert path in routes, f"{hook['name']} calls {path}, which no handler serves"
        route = routes[path]
        seen.add(path)
        assert validating == route.validating, f"{hook['name']}: validating/mutating kind differs"
        resources = {
            (group, plural) for rule in hook["rules"] for group in rule["apiGroups"] for plural in rule["resources"]
        }
        assert resources == set(route.resources), hook["name"]
        for rule in hook["rules"]:
            assert sorted(rule["operations"]) == sorted(route.operations), hook["name"]
    assert seen == set(routes), "a handler the chart never calls"


def test_pod_and_workload_webhooks_skip_the_same_namespaces(render: Callable[..., list[Manifest]]) -> None:
    selectors = [hook["namespaceSelector"] for validating, hook in _webhooks(render()) if not validating]
    assert len(selectors) == 2 and selectors[0] == selectors[1]
