"""The API calls the Kubernetes shim makes, as (group, resource, verb, scope) rules.

The shim declares them itself (shim/kube/permissions.py); the RBAC check compares the chart
against that list, so a call added to the shim without a permission fails here.
"""

from __future__ import annotations

from shim.kube.permissions import CLUSTER, OWN_NAMESPACE, SHIM_API_CALLS

__all__ = ["CLUSTER", "OWN_NAMESPACE", "SHIM_API_CALLS"]
