"""The LeaderElector's store: one coordination.k8s.io/v1 Lease read, created and patched.

Every write is a merge patch carrying the resourceVersion that was read, which the API server
treats as a precondition: a replica that lost the race gets 409 and stays a standby. (PATCH,
not PUT, so the same code runs against kmock, which has no PUT.)
"""

from __future__ import annotations

import datetime
from typing import Any

from kubernetes import client

from shim.kube.leader.lease import LeaseRecord


def _micro_time(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _seconds(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, datetime.datetime):
        return value.timestamp()
    return datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


def _spec(record: LeaseRecord) -> dict[str, Any]:
    return {
        "holderIdentity": record.holder,
        "leaseDurationSeconds": max(1, round(record.duration)),
        "renewTime": _micro_time(record.renew_time),
        "acquireTime": _micro_time(record.renew_time),
        "leaseTransitions": record.transitions,
    }


class KubeLeaseStore:
    """`shim.kube.leader.lease.LeaseStore` over the API; errors other than 409 propagate to the caller."""

    def __init__(self, api_client: client.ApiClient, namespace: str, name: str, timeout: float = 5.0) -> None:
        self._api = client.CoordinationV1Api(api_client)
        self.namespace = namespace
        self.name = name
        self._timeout = timeout

    def read(self) -> tuple[LeaseRecord, str] | None:
        try:
            lease = self._api.read_namespaced_lease(self.name, self.namespace, _request_timeout=self._timeout)
        except client.ApiException as error:
            if error.status == 404:
                return None
            raise
        spec = lease.spec or client.V1LeaseSpec()
        record = LeaseRecord(
            holder=spec.holder_identity or None,
            renew_time=_seconds(spec.renew_time),
            duration=float(spec.lease_duration_seconds or 0),
            transitions=int(spec.lease_transitions or 0),
        )
        return record, str(lease.metadata.resource_version or "") if lease.metadata else ""

    def create(self, record: LeaseRecord) -> bool:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": _spec(record),
        }
        try:
            self._api.create_namespaced_lease(self.namespace, body, _request_timeout=self._timeout)  # type: ignore[arg-type]
        except client.ApiException as error:
            if error.status == 409:
                return False
            raise
        return True

    def replace(self, record: LeaseRecord, version: str) -> bool:
        spec = _spec(record)
        spec.pop("acquireTime")  # only set when the Lease is created
        body = {"metadata": {"resourceVersion": version}, "spec": spec}
        try:
            self._api.patch_namespaced_lease(self.name, self.namespace, body, _request_timeout=self._timeout)
        except client.ApiException as error:
            if error.status == 409:
                return False
            raise
        return True
