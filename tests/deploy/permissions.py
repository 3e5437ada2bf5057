"""The API calls the Kubernetes shim makes, as (group, resource, verb, scope) rules.

Kept here until shim/kube declares its own list; the RBAC check compares the chart against it.
"""

from __future__ import annotations

CLUSTER = "cluster"
OWN_NAMESPACE = "namespace"

SHIM_API_CALLS: frozenset[tuple[str, str, str, str]] = frozenset(
    {("", "pods", verb, CLUSTER) for verb in ("get", "list", "watch")}
    | {("", "pods/binding", "create", CLUSTER), ("", "pods/eviction", "create", CLUSTER)}
    | {("", "pods/status", "patch", CLUSTER)}
    | {
        ("", resource, verb, CLUSTER)
        for resource in ("nodes", "namespaces")
        for verb in ("get", "list", "watch")
    }
    | {(group, "events", verb, CLUSTER) for group in ("", "events.k8s.io") for verb in ("create", "patch")}
    | {
        ("scheduling.sigs.k8s.io", "elasticquotas", verb, CLUSTER)
        for verb in ("get", "list", "watch", "patch")
    }
    | {("scheduling.sigs.k8s.io", "elasticquotas/status", "patch", CLUSTER)}
    | {("", "configmaps", verb, OWN_NAMESPACE) for verb in ("get", "list", "watch")}
    | {
        ("coordination.k8s.io", "leases", verb, OWN_NAMESPACE)
        for verb in ("get", "create", "update", "patch")
    }
)
