"""The chart grants the operator exactly the API calls the shim makes: nothing missing, nothing extra."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.deploy.permissions import CLUSTER, OWN_NAMESPACE, SHIM_API_CALLS

Manifest = dict[str, Any]


def _granted(manifests: list[Manifest]) -> set[tuple[str, str, str, str]]:
    scopes = {"ClusterRole": CLUSTER, "Role": OWN_NAMESPACE}
    granted = set()
    for manifest in manifests:
        if manifest["kind"] not in scopes:
            continue
        for rule in manifest["rules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for verb in rule["verbs"]:
                        granted.add((group, resource, verb, scopes[manifest["kind"]]))
    return granted


def test_rbac_grants_exactly_the_shims_api_calls(render: Callable[..., list[Manifest]]) -> None:
    granted = _granted(render())
    assert SHIM_API_CALLS - granted == set(), "missing permissions"
    assert granted - SHIM_API_CALLS == set(), "permissions the shim never uses"


def test_no_wildcards_or_secrets_access(render: Callable[..., list[Manifest]]) -> None:
    granted = _granted(render())
    assert all("*" not in (group, resource, verb) for group, resource, verb, _ in granted)
    assert not any(resource == "secrets" for _, resource, _, _ in granted)


def test_namespaced_role_and_bindings_stay_in_the_release_namespace(
    render: Callable[..., list[Manifest]],
) -> None:
    manifests = render()
    role = next(m for m in manifests if m["kind"] == "Role")
    binding = next(m for m in manifests if m["kind"] == "RoleBinding")
    account = next(m for m in manifests if m["kind"] == "ServiceAccount")
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == "herder-system"
    for kind in ("RoleBinding", "ClusterRoleBinding"):
        subject = next(m for m in manifests if m["kind"] == kind)["subjects"][0]
        assert subject == {
            "kind": "ServiceAccount",
            "name": account["metadata"]["name"],
            "namespace": "herder-system",
        }
    deployment = next(m for m in manifests if m["kind"] == "Deployment")
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == account["metadata"]["name"]
