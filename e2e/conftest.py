"""e2e fixtures: one Cluster handle per session (real cluster or emulator) and a fresh namespace per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client

from e2e.backends import Cluster, emulator_cluster, kubeconfig_cluster, select_backend


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    backend = kubeconfig_cluster if select_backend() == "kubeconfig" else emulator_cluster
    with backend() as handle:
        yield handle


@pytest.fixture
def namespace(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace under root.e2e whose name says which test made it."""
    name = f"e2e-{request.node.name[5:30].replace('_', '-').strip('-')}-{uuid.uuid4().hex[:5]}"
    body = client.V1Namespace(
        metadata=client.V1ObjectMeta(name=name, annotations={"yunikorn.apache.org/parentqueue": "root.e2e"})
    )
    cluster.core.create_namespace(body)
    yield name
    cluster.core.delete_namespace(name, grace_period_seconds=0)
