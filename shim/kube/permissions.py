"""The Kubernetes API calls the shim makes, declared once as (apiGroup, resource, verb, scope).

The Helm chart's RBAC is checked against this list: a call the shim makes must appear here, and
a permission the chart grants must be used here.
"""

from __future__ import annotations

from shim.convert.gang_sources import GROUP_KINDS

CLUSTER = "cluster"
OWN_NAMESPACE = "namespace"

_READ = ("get", "list", "watch")
_WATCH = ("list", "watch")
_STATUS_KINDS = [kind for kind in GROUP_KINDS if kind.status]

SHIM_API_CALLS: frozenset[tuple[str, str, str, str]] = frozenset(
    {("", resource, verb, CLUSTER) for resource in ("pods", "nodes", "namespaces") for verb in _READ}
    | {("", "pods/binding", "create", CLUSTER), ("", "pods/eviction", "create", CLUSTER)}
    | {("", "pods/status", "patch", CLUSTER)}
    | {("", "pods", verb, CLUSTER) for verb in ("create", "delete")}  # gang placeholders only
    | {("", "events", verb, CLUSTER) for verb in ("create", "patch")}
    | {("scheduling.sigs.k8s.io", "elasticquotas", verb, CLUSTER) for verb in (*_READ, "patch", "create")}
    | {("scheduling.sigs.k8s.io", "elasticquotas/status", "patch", CLUSTER)}
    | {("authentication.k8s.io", "tokenreviews", "create", CLUSTER)}
    | {("scheduling.k8s.io", "priorityclasses", verb, CLUSTER) for verb in _READ}
    | {("policy", "poddisruptionbudgets", verb, CLUSTER) for verb in _READ}
    # volumes: read all three; patch a volume's claimRef and a claim's selected-node annotation
    | {("", resource, verb, CLUSTER) for resource in ("persistentvolumes", "persistentvolumeclaims") for verb in _READ}
    | {("", resource, "patch", CLUSTER) for resource in ("persistentvolumes", "persistentvolumeclaims")}
    | {("storage.k8s.io", "storageclasses", verb, CLUSTER) for verb in _READ}
    # the PodGroup APIs (watched only where served): list and watch the groups, patch their status
    | {(group, kind.plural, verb, CLUSTER) for kind in GROUP_KINDS for group in kind.groups for verb in _WATCH}
    | {(group, f"{kind.plural}/status", "patch", CLUSTER) for kind in _STATUS_KINDS for group in kind.groups}
    | {("", "configmaps", verb, OWN_NAMESPACE) for verb in _READ}
    | {("coordination.k8s.io", "leases", verb, OWN_NAMESPACE) for verb in ("get", "create", "update", "patch")}
    # gangs' ProvisioningRequests (autoscaling.provisioningRequests): the requests, their pod
    # templates, and the consume annotations on the gang's pods
    | {("autoscaling.x-k8s.io", "provisioningrequests", verb, CLUSTER) for verb in ("create", "list", "delete")}
    | {("", "podtemplates", verb, CLUSTER) for verb in ("create", "delete")}
    | {("", "pods", "patch", CLUSTER)}
)
