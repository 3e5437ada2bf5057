"""The start-up sync goes by path: it imports none of the client's generated classes for the
objects it reads (nodes, namespaces, storage, quotas, pods, the ConfigMap).

Importing the official client's `CoreV1Api` alone costs about 1.2 s of CPU (a pydantic validator
per method), a tenth of `herder run`'s way to ready on a 50,000-pod cluster
(docs/performance.md); the reads, Events and status writes go through shim/kube/calls.py
instead. Run in a fresh interpreter: the other tests import those classes freely.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import functools, json, sys
import tests.kube.emulator as emulator
from shim.bench.emulator_process import BENCH_NAMESPACE, _populate
from shim.kube.calls import ApiCalls
from shim.kube.operator import HerderOperator, OperatorOptions
from shim.kube.watch.reload import ConfigSource

with emulator.EmulatorServer() as server:
    api = server.api_client()
    ApiCalls(api).request("POST", "/api/v1/namespaces", emulator.namespace_body(BENCH_NAMESPACE))
    server.call(functools.partial(_populate, server.emulator, emulator, 2, 3), timeout=30)
    operator = HerderOperator(api, OperatorOptions(source=ConfigSource(namespace="herder-system"), identity="x"))
    operator.start()
    loaded = sorted(name for name in sys.modules if name.startswith("kubernetes.client.api."))
    print(json.dumps({"counts": operator.pods.counts(), "api_modules": loaded}))
    operator.stop()
"""


def test_the_start_up_sync_reads_the_cluster_without_the_generated_api_classes() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=50,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["counts"]["own"] == 3  # the three running pods were recovered: the sync did read them
    assert "kubernetes.client.api.core_v1_api" not in found["api_modules"]
    assert "kubernetes.client.api.storage_v1_api" not in found["api_modules"]
    assert "kubernetes.client.api.custom_objects_api" not in found["api_modules"]
