"""`herder bench --emulator --restart`: how long `herder run` takes to be ready on a big bound cluster.

A replica restarting (an upgrade, a failover, a crashed pod) must read the whole cluster
before it decides anything: every node and every pod, Herder's own running ones recovered
into queues, users and quotas, none bound again. The emulator (its own process and core, as
an API server) is filled with `--nodes` nodes and `--pods` Herder pods bound and running on
them; then a real `herder run` process starts against it (through a kubeconfig, with its
defaults) and the bench polls `/readyz` until it answers 200: the initial sync is done. Ready
is measured from the process's start, so the interpreter and its imports count. The replica
then leads (takes the Lease) and runs a few cycles; the emulator counts its bindings, which
must be 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from shim.bench.emulator_process import EmulatorProcess

HERDER_NAMESPACE = "herder-system"
READY_TIMEOUT = 600.0
CYCLES_AFTER_LEADING = 3.0  # seconds the leader runs before its bindings are counted


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def write_kubeconfig(path: Path, server: str, namespace: str = HERDER_NAMESPACE, token: str = "bench") -> Path:
    """A kubeconfig for `server` (no TLS), a bearer `token`, and `namespace` as the context's."""
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "emulated", "cluster": {"server": server}}],
                "users": [{"name": "user", "user": {"token": token}}],
                "contexts": [
                    {"name": "emulated", "context": {"cluster": "emulated", "user": "user", "namespace": namespace}}
                ],
                "current-context": "emulated",
            }
        )
    )
    return path


def _readyz(port: int) -> dict[str, Any] | None:
    """The /readyz document once it answers 200, else None."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as answer:
            found: dict[str, Any] = json.loads(answer.read())
            return found
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU the process has used so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _wait(what: str, check: Any, process: subprocess.Popen[bytes], log: Path) -> Any:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        if process.poll() is not None:
            raise RuntimeError(f"herder run exited ({process.returncode}) before {what}: {log.read_text()[-2000:]}")
        time.sleep(0.02)
    raise RuntimeError(f"herder run: no {what} within {READY_TIMEOUT:.0f}s")


def run_restart_bench(nodes: int, pods: int, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """`herder run` to ready on `nodes` nodes and `pods` bound pods; `progress` hears of each step."""
    with EmulatorProcess(0) as server, tempfile.TemporaryDirectory() as tmp:
        if progress is not None:
            progress(f"filling the emulator with {nodes:,} nodes and {pods:,} bound pods")
        server.populate(nodes, pods)
        if progress is not None:
            progress("herder run: start-up, initial sync, ready, the Lease (it must bind nothing)")
        config = write_kubeconfig(Path(tmp) / "kubeconfig", server.url)
        log = Path(tmp) / "herder.log"
        port = _free_port()
        command = [sys.executable, "-m", "shim.cli", "run", "--kubeconfig", str(config)]
        command += ["--identity", "bench-restart", "--rest-port", str(port), "--rest-address", "127.0.0.1"]
        bindings_before = server.bindings()
        began = time.monotonic()
        with log.open("wb") as errors:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
        try:
            _wait("/readyz answering 200", lambda: _readyz(port), process, log)
            ready_seconds = time.monotonic() - began
            cpu_ready = _cpu_seconds(process.pid)
            memory = _rss_mib(process.pid)
            _wait("the Lease", lambda: (_readyz(port) or {}).get("leader"), process, log)
            time.sleep(CYCLES_AFTER_LEADING)
            bindings = server.bindings() - bindings_before
        finally:
            process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(60)
            if process.poll() is None:
                process.kill()
        text = log.read_text()
        synced = re.search(r"synced .* in ([0-9.]+)s", text)
        running = re.search(r"synced .*?(\d+) running Herder pods", text)
    return {
        "nodes": nodes,
        "pods": pods,
        "ready_seconds": round(ready_seconds, 2),
        "sync_seconds": float(synced.group(1)) if synced else None,
        "recovered_pods": int(running.group(1)) if running else 0,
        "herder_cpu_seconds_to_ready": round(cpu_ready, 2),
        "bindings_after_restart": bindings,
        "memory_mib": round(memory),
    }
