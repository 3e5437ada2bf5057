"""The ElasticQuota objects of the quota groups outside the tree, created by the leader.

Seed 002: the sys-group and the default-group are "created by default not only in scheduler
memory, but also try create the quota group crd", as Koordinator does in its
`koordinator-system` namespace. Herder's leader creates `system` and `default` in its own
namespace (`quota.groupNamespace`), once per leadership, when `quota.groupObjects` is on. It
only ever creates: an object that exists (409) is left as it is, so a user's edits of the
default group's min and max are never fought, and a failure is logged and tried at the next
leadership, never raised.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from core.elastic.spec import DEFAULT_QUOTA, SYSTEM_QUOTA
from core.resources import Resource
from shim.kube.kinds import QUOTA_GROUP, QUOTA_PLURAL, QUOTA_VERSION
from shim.kube.write.quota_status import kube_quantities

log = logging.getLogger("herder.quotas")

MANAGED_BY = {"app.kubernetes.io/managed-by": "herder"}


def group_quota_bodies(namespace: str, default_max: Resource | None) -> list[dict[str, Any]]:
    """The two objects: the system group's with nothing set (its min and max are unlimited),
    the default group's with `quota.defaultMax` as its max (empty: unlimited)."""
    max_ = kube_quantities(default_max) if default_max else {}
    return [
        {
            "apiVersion": f"{QUOTA_GROUP}/{QUOTA_VERSION}",
            "kind": "ElasticQuota",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY)},
            "spec": spec,
        }
        for name, spec in ((SYSTEM_QUOTA, {}), (DEFAULT_QUOTA, {"min": {}, "max": max_}))
    ]


def create_group_quotas(
    api_client: client.ApiClient, namespace: str, default_max: Resource | None, timeout: float = 10.0
) -> list[str]:
    """Create each group's object that does not exist yet; the names created."""
    custom = client.CustomObjectsApi(api_client)
    created: list[str] = []
    for body in group_quota_bodies(namespace, default_max):
        name = _name(body)
        try:
            custom.create_namespaced_custom_object(
                QUOTA_GROUP, QUOTA_VERSION, namespace, QUOTA_PLURAL, body, _request_timeout=timeout
            )
        except ApiException as error:
            if error.status != 409:  # 409: it exists, and stays as it is
                log.warning("could not create ElasticQuota %s/%s: %s %s", namespace, name, error.status, error.reason)
            continue
        except Exception as error:  # a network error: the next leadership tries again
            log.warning("could not create ElasticQuota %s/%s: %s", namespace, name, error)
            continue
        created.append(name)
        log.info("created ElasticQuota %s/%s for the %s quota group", namespace, name, name)
    return created


def _name(body: Mapping[str, Any]) -> str:
    return str(body["metadata"]["name"])
