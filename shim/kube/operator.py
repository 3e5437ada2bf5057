"""`HerderOperator`: the scheduler core wired to a Kubernetes cluster through kopf.

One object per replica owns everything the replica runs:

- the core (`Scheduler`) and the shim's view of the cluster (`KubeCache`);
- the inputs: `PodSync` and `NodeSync` (fed by the pod and node watches, reflector.py),
  `GroupSync` (the PodGroup APIs' objects the server serves, watched the same way),
  `QuotaSync` and namespaces (kopf's `on.event` handlers, handlers.py) and the
  `ConfigReloader` (the scheduler ConfigMap);
- the outputs: `Binder` and `Evictor` behind the core's `ShimCallbacks`;
- the threads: `Leadership` (the Lease) running `SchedulingLoops` (cycle and recycler) while it
  leads, and a housekeeper (config reload, binding retries, progress log).

Life cycle: `run()` runs kopf in the calling thread. kopf's start-up handler lists the whole
cluster (`start()`), so the core knows every node, namespace, quota and pod before the first
cycle; only then do the watches start (pods and nodes from the listing's resourceVersion).
kopf's cleanup handler calls `stop()`: step down and release the Lease, stop the threads, let
in-flight bindings finish.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import kopf
from kubernetes import client

from core.config import ConfigError
from core.scheduler import Scheduler
from shim.command import freeze_long_lived, herder_version
from shim.kube.housekeeping import Housekeeper
from shim.kube.leader.lease import LeaderElector
from shim.kube.leader.loops import Leadership, SchedulingLoops
from shim.kube.watch.budgets import BudgetSync
from shim.kube.watch.cache import KubeCache
from shim.kube.watch.groups import GroupSync, ServedKind, served_kinds
from shim.kube.watch.listing import ClusterReader, PagedListing
from shim.kube.watch.nodes import NodeSync
from shim.kube.watch.pods import PodSync
from shim.kube.watch.quotas import QuotaSync
from shim.kube.watch.reflector import PLACEMENT_TIMING, Reflector, WatchTarget
from shim.kube.watch.reload import ConfigReloader, ConfigSource, parse_configmap
from shim.kube.watch.storage import PATHS as STORAGE_PATHS
from shim.kube.watch.storage import StorageSync
from shim.kube.write.api import KubeWriter
from shim.kube.write.binder import GONE, RETRY, Binder, BindPolicy, NotLeader, classify
from shim.kube.write.callbacks import ShimCallbacks
from shim.kube.write.evictor import Evictor
from shim.kube.write.lease_store import KubeLeaseStore
from shim.kube.write.placeholders import PlaceholderWriter
from shim.kube.write.quota_groups import create_group_quotas
from shim.kube.write.recorder import EventRecorder
from shim.kube.write.volumes import VolumeBinder, VolumeWrites
from shim.metrics import ShimMetrics
from shim.ports import ANY_ADDRESS, check_port_free, rest_port_taken, webhook_port_taken
from shim.rest import RestStatus
from shim.rest.access import RestAccess

log = logging.getLogger("herder.operator")


class StartupError(Exception):
    """The operator cannot start (bad configuration, API unreachable); the message says why."""


@dataclass(frozen=True, slots=True)
class OperatorOptions:
    source: ConfigSource
    identity: str
    bind_timeout: float = 10.0
    housekeeping_interval: float = 1.0
    # How long a placed pod waits for the claims Herder wrote to bind before it is given back
    # (kube-scheduler's VolumeBinding bindTimeoutSeconds, 600 s by default there).
    volume_bind_timeout: float = 600.0
    rest_port: int | None = None  # None: no REST server; 0: any free port (see HerderOperator.rest_port)
    rest_host: str = "0.0.0.0"
    # the REST port bound already (`herder run` binds it first of all: shim/ports.py)
    rest_socket: socket.socket | None = None
    rest_access: RestAccess | None = None  # tokens and CORS origins; None: open, no CORS
    webhook_port: int | None = None  # None: no admission webhooks
    webhook_cert: str | None = None
    webhook_key: str | None = None
    webhook_cert_dir: str | None = None  # holding tls.crt and tls.key (the chart's Secret)
    webhook_insecure: bool = False  # plain HTTP, for tests only
    webhook_addr: str | None = None
    extra_settings: Mapping[str, Any] = field(default_factory=dict)  # kopf settings tweaks (tests)
    # freeze the heap out of the cyclic collector after the first sync (`herder run`; tests
    # run many replicas in one process and leave it off)
    freeze_after_sync: bool = False


class HerderOperator:
    def __init__(self, api_client: client.ApiClient, options: OperatorOptions) -> None:
        self.api_client = api_client
        api_client.user_agent = f"herder/{herder_version()} ({options.identity})"
        self.options = options
        self.identity = options.identity
        self.reader = ClusterReader(api_client)
        self.recorder = EventRecorder(api_client)
        self.status = RestStatus(identity=options.identity)
        self.metrics = ShimMetrics()
        self.cache = KubeCache()
        self.bound = 0
        self.rest_port: int | None = None
        self.extras: Any = None  # what shim/kube/extensions.py started for this replica
        self._dead = threading.Event()  # set by kill(): the replica acts as if its process died
        self._bind_errors: dict[str, BaseException] = {}

        source = options.source
        self._namespace = source.namespace
        configmap = self._read_configmap()
        try:
            config, settings = parse_configmap((configmap or {}).get("data"), source)
        except ConfigError as error:
            raise StartupError(
                f"ConfigMap {source.namespace}/{source.name} is invalid:\n  - " + "\n  - ".join(error.problems)
            ) from None
        if configmap is None:
            log.warning(
                "ConfigMap %s/%s not found; using %s until it is created",
                source.namespace,
                source.name,
                "the --config file" if source.fallback else "the default configuration",
            )

        writer = KubeWriter(api_client, timeout=options.bind_timeout, pool_size=settings.bind_workers + 2)
        self._writer = writer
        self.binder = Binder(
            self._post_binding,
            self.cache.locate,
            self._binding_given_back,
            BindPolicy(workers=settings.bind_workers, attempts=settings.bind_retries),
        )
        self.evictor = Evictor(self._post_eviction, self.cache.locate, self._eviction_failed)
        self.placeholders = PlaceholderWriter(
            writer.create_pod,
            writer.delete_pod,
            self.cache.pod,
            lambda: (self.scheduler.settings.placeholder_image, self.scheduler.settings.scheduler_name),
            lambda key: self.scheduler.release_allocation(key),
            self.binder.submit,
            alive=self.may_write,  # leader fencing, as for bindings
        )
        self.volumes = VolumeBinder(
            VolumeWrites(api_client, options.bind_timeout),
            lambda claim: self.storage.claim_bound(claim),
            self.binder.submit,
            self._volumes_given_back,
            may_write=self.may_write,
            timeout=options.volume_bind_timeout,
        )
        self.callbacks = ShimCallbacks(self.binder, self.evictor, placeholders=self.placeholders, volumes=self.volumes)
        self.scheduler = Scheduler(self.callbacks, config, settings)
        self.storage = StorageSync(self.scheduler, self.recorder)
        self.groups = GroupSync(self.recorder)
        self.pods = PodSync(
            self.scheduler, self.cache, self._pod_deleted, retiring=self.placeholders.is_retiring, groups=self.groups
        )
        self.groups.on_change = self.pods.group_changed
        self.served_groups: list[ServedKind] = []  # the PodGroup APIs the server serves (found at start)
        self.group_watches: list[Reflector] = []
        self.nodes = NodeSync(self.scheduler, self.cache, self.recorder)
        self.quotas = QuotaSync(self.scheduler, self.recorder)
        self.budgets = BudgetSync(self.scheduler, self.recorder)
        self.reloader = ConfigReloader(
            self.scheduler,
            source,
            self._read_configmap,
            self.recorder,
            initial=(configmap or {}).get("data") if configmap is not None else None,
        )
        self.reloader.tell_warnings(configmap, config)
        self.pod_watch = Reflector(
            api_client,
            WatchTarget(
                "pods", "/api/v1/pods", self.reader.pod_listing, self.pods.apply, self.pods.delete, self._relist_pods
            ),
            observe=self.metrics.watch_restart,
        )
        self.node_watch = Reflector(
            api_client,
            WatchTarget(
                "nodes",
                "/api/v1/nodes",
                self.reader.node_listing,
                self.nodes.apply,
                self.nodes.delete,
                self._relist_nodes,
            ),
            PLACEMENT_TIMING,
            observe=self.metrics.watch_restart,
        )
        self.storage_watches = [
            Reflector(
                api_client,
                WatchTarget(
                    plural,
                    path,
                    partial(self.reader.storage_listing, plural),
                    *self.storage.handlers(plural),
                    partial(self._relist_storage, plural),
                ),
                PLACEMENT_TIMING,
                observe=self.metrics.watch_restart,
            )
            for plural, path in STORAGE_PATHS.items()
        ]
        self.loops = SchedulingLoops(self.scheduler, may_act=self.may_write)
        store = KubeLeaseStore(api_client, source.namespace, settings.lease_name)
        elector = LeaderElector(store, options.identity, settings.lease_duration)
        self.leadership = Leadership(elector, self.scheduler, self._elected, self._deposed)
        self.housekeeper = Housekeeper(self, options.housekeeping_interval)
        self.stopped = threading.Event()
        self._threads_started = False

    # -- life cycle --------------------------------------------------------------------------
    def start(self) -> None:
        """Load the whole cluster into the core, then start the Lease loop and housekeeping.

        Safe to call again after a failed listing (kopf retries its start-up handler): every
        input is idempotent and the threads start once.
        """
        # What the sync builds lives for the run: the cyclic collector would only walk it again
        # and again as it grows (13% of the sync's CPU at 50,000 pods). With `freeze_after_sync`
        # it is off until the sync's objects are frozen.
        paused = self.options.freeze_after_sync and gc.isenabled()
        if paused:
            gc.disable()
        try:
            self._sync()
        finally:
            if paused:
                gc.enable()

    def _sync(self) -> None:
        began = time.monotonic()
        # The pods' first pages are read (by the listing's thread) while the nodes, namespaces,
        # storage and quotas are listed and applied: those are small, the pods are most of it.
        listing = self.reader.pod_pages().started()
        try:
            self._sync_from(began, listing)
        finally:
            listing.close()

    def _sync_from(self, began: float, listing: PagedListing) -> None:
        nodes, node_version = self.reader.node_listing()
        for node in nodes:
            self.nodes.apply(node)
        namespaces = self.reader.namespaces()
        for namespace in namespaces:
            self.pods.namespace_changed(namespace)
        storage_versions = {}
        for plural in STORAGE_PATHS:
            objects, storage_versions[plural] = self.reader.storage_listing(plural)
            self.storage.relist(plural, objects)
        group_versions = self._sync_groups()
        quotas = self.reader.quotas()
        if quotas is None:
            log.warning("the ElasticQuota CRD is not installed; elastic quotas are off until it is (restart)")
        else:
            self.quotas.apply_all(quotas)
        pods = 0
        for page in listing:
            pods += len(page)
            self.pods.apply_all(page)
        pod_version = listing.version
        counts = self.pods.counts()
        log.info(
            "synced %d nodes, %d namespaces, %d quotas, %d pods (%d pending Herder pods, %d running Herder pods, "
            "%d foreign pods) in %.2fs",
            len(nodes),
            len(namespaces),
            len(quotas or []),
            pods,
            counts["ask"],
            counts["own"],
            counts["foreign"],
            time.monotonic() - began,
        )
        self.housekeeper.synced()
        self.status.mark_synced()
        if not self._threads_started:
            self._threads_started = True
            if self.options.freeze_after_sync:
                freeze_long_lived()
            self.node_watch.start(node_version)
            for watch, plural in zip(self.storage_watches, STORAGE_PATHS, strict=True):
                watch.start(storage_versions[plural])
            for watch, served in zip(self.group_watches, self.served_groups, strict=True):
                watch.start(group_versions[served])
            self.pod_watch.start(pod_version)
            self.leadership.start()
            self.housekeeper.start()

    def _sync_groups(self) -> dict[ServedKind, str]:
        """List the PodGroup APIs' objects the server serves (asked once, at the first sync), before
        the pods that name them; the version to watch each kind from."""
        if not self._threads_started and not self.group_watches:
            self.served_groups = served_kinds(self.api_client)
            self.group_watches = [
                Reflector(
                    self.api_client,
                    WatchTarget(
                        served.kind.plural,
                        served.path,
                        partial(self.reader.custom_listing, served.group, served.version, served.kind.plural),
                        *self.groups.handlers(served),
                        partial(self.groups.relist, served),
                    ),
                    observe=self.metrics.watch_restart,
                )
                for served in self.served_groups
            ]
            names = ", ".join(served.name for served in self.served_groups) or "none"
            log.info("gang APIs served (their groups are watched): %s", names)
        versions = {}
        for served in self.served_groups:
            objects, versions[served] = self.reader.custom_listing(served.group, served.version, served.kind.plural)
            self.groups.relist(served, objects)
        return versions

    def stop(self) -> None:
        """Graceful shutdown: no new placements, Lease released, in-flight bindings finished."""
        if self.stopped.is_set():
            return
        self.stopped.set()
        self.pod_watch.stop()
        self.node_watch.stop()
        for watch in self.storage_watches + self.group_watches:
            watch.stop()
        self.volumes.shutdown()
        self.housekeeper.stop()
        self.leadership.stop(release=not self._dead.is_set())
        self.loops.stop()
        self.binder.shutdown(timeout=30)
        self.evictor.shutdown()
        self.placeholders.shutdown()
        log.info("%s stopped (%d pods bound by this replica)", self.identity, self.bound)

    def kill(self) -> None:
        """Tests: act as a killed process from now on (no writes, no Lease renewal or release)."""
        self._dead.set()
        self.pod_watch.stop()
        self.node_watch.stop()
        for watch in self.storage_watches + self.group_watches:
            watch.stop()
        self.leadership.stop(release=False)
        self.housekeeper.stop()
        self.loops.stop()

    @property
    def alive(self) -> bool:
        return not self._dead.is_set()

    def may_write(self) -> bool:
        """Leader fencing (see leader/loops.py): checked before every cycle and every write."""
        return self.alive and self.leadership.may_act()

    def _elected(self) -> None:
        self.status.set_leader(True)
        if self.alive:
            self.loops.start()
            settings = self.scheduler.settings
            if settings.group_objects:
                namespace = settings.group_namespace or self._namespace
                threading.Thread(
                    target=create_group_quotas,
                    args=(self.api_client, namespace, settings.default_max),
                    name="herder-quota-groups",
                    daemon=True,
                ).start()

    def _deposed(self) -> None:
        self.status.set_leader(False)
        self.loops.stop()
        # Bindings kept to be posted again are no longer this replica's to post: the leader
        # places those pods (or this one again, once re-elected, from a fresh decision).
        self.pods.roll_back_reposts()

    def _relist_pods(self, pods: list[dict[str, Any]], began: float) -> None:
        for pod in pods:
            self.pods.apply(pod)
        self.pods.reconcile(pods, began)

    def _relist_storage(self, plural: str, objects: list[dict[str, Any]], _began: float) -> None:
        self.storage.relist(plural, objects)

    def _volumes_given_back(self, key: str, why: str) -> None:
        """The pod's claims did not bind: say so on the pod, then undo the placement as for a
        binding given back (the pod is read again and tried again)."""
        pod = self.cache.pod(key)
        if pod is not None:
            self.recorder.record(pod, "Pod", "v1", "FailedBinding", f"Herder did not bind the pod: {why}")
        self.binder.forget(key)
        self._binding_given_back(key)

    def _relist_nodes(self, nodes: list[dict[str, Any]], _began: float) -> None:
        for node in nodes:
            self.nodes.apply(node)
        self.nodes.reconcile(nodes)

    # -- kopf --------------------------------------------------------------------------------
    def run(self, stop_flag: threading.Event, ready_flag: threading.Event | None = None) -> None:
        """Run kopf (and so the whole operator) in this thread until `stop_flag` is set or a signal."""
        from shim.kube import extensions
        from shim.kube.handlers import build_registry, kopf_settings

        registry = build_registry(self)
        settings = kopf_settings(self.options.extra_settings)
        extensions.register_webhooks(self, registry, settings)
        webhook_port = self.options.webhook_port
        if webhook_port:
            try:
                check_port_free(self.options.webhook_addr or ANY_ADDRESS, webhook_port)
            except OSError as error:
                raise StartupError(webhook_port_taken(webhook_port, error)) from None
        try:
            rest = extensions.start_rest(self)
        except OSError as error:
            raise StartupError(rest_port_taken(self.options.rest_host, self.options.rest_port, error)) from None

        async def operate() -> None:
            try:
                await kopf.operator(
                    registry=registry,
                    settings=settings,
                    clusterwide=True,
                    standalone=True,
                    stop_flag=stop_flag,
                    ready_flag=ready_flag,
                    memo=kopf.Memo(),
                )
            finally:
                # kopf waits for a threading.Event stop flag in an executor thread; after a
                # signal the flag must still be set, or the loop's shutdown waits for it forever.
                stop_flag.set()

        try:
            asyncio.run(operate())
        finally:
            if rest is not None:
                rest.stop()
        # kopf runs its cleanup handler only when its start-up handler had finished; a SIGTERM
        # during start-up (the watches and the Lease loop may already run) must still step down,
        # release the Lease and finish in-flight bindings.
        if self._threads_started:
            self.stop()

    # -- the binder's and evictor's API calls ------------------------------------------------
    def _post_binding(self, namespace: str, name: str, node: str, pod: str) -> None:
        if self._dead.is_set():
            raise ConnectionError("this replica is stopped")
        key = f"{namespace}/{name}"
        if not self.may_write():
            lapsed = NotLeader(f"{self.identity} does not hold a freshly renewed Lease; not binding {key}")
            self._bind_errors[key] = lapsed  # what the give-back decides by (`_binding_given_back`)
            raise lapsed
        began = time.monotonic()
        cached = self.cache.pod(pod)
        uid = ((cached or {}).get("metadata") or {}).get("uid")
        try:
            self._writer.post_binding(namespace, name, node, uid=str(uid) if uid else None)
        except Exception as error:
            self._bind_errors[key] = error
            raise
        self._bind_errors.pop(key, None)
        self.metrics.observe_bind(time.monotonic() - began)
        self.bound += 1
        log.debug("bound %s to %s", key, node)

    def _binding_given_back(self, key: str) -> None:
        """The binder gave up on a pod (a 409 included: "look", never "forget"): read it again and
        let PodSync decide (see PodSync.binding_failed)."""
        where = self.cache.locate(key)
        if where is not None:
            error = self._bind_errors.pop(f"{where[0]}/{where[1]}", None)
            verdict = classify(error) if error is not None else GONE
            self.metrics.bind_error({GONE: "gone", RETRY: "exhausted"}.get(verdict, "failed"))
            # Transient: the placement stays and the binding is posted again while the pod is
            # pending. A Lease renewed too late to write (a slow API server) is transient too while
            # this replica still leads; once it steps down, `_deposed` rolls such placements back.
            lapsed = isinstance(error, NotLeader) and self.leadership.leading
            self.pods.binding_given_up(key, transient=verdict == RETRY or lapsed)
        self.look_at_binding(key)

    def look_at_binding(self, key: str) -> None:
        """Read the pod whose binding's outcome is unknown; the server's answer decides."""
        where = self.cache.locate(key)
        fresh: dict[str, Any] | None = None
        gone = where is None
        if where is not None:
            namespace, name = where
            try:
                fresh = self.reader.pod(namespace, name)
                gone = fresh is None
            except Exception as read_error:
                log.warning("could not re-read pod %s/%s after its binding failed: %s", namespace, name, read_error)
        self.pods.binding_failed(key, fresh, gone)

    def _post_eviction(self, namespace: str, name: str) -> None:
        if self._dead.is_set():
            raise ConnectionError("this replica is stopped")
        if not self.may_write():
            raise NotLeader(f"{self.identity} does not hold a freshly renewed Lease; not evicting {namespace}/{name}")
        try:
            self._writer.post_eviction(namespace, name)
        except Exception as error:
            status = getattr(error, "status", None)
            if status == 404:
                self.metrics.eviction("gone")
            raise
        self.metrics.eviction("evicted")

    def _pod_deleted(self, key: str) -> None:
        self.binder.forget(key)
        self.placeholders.forget(key)

    def _eviction_failed(self, key: str, why: str) -> None:
        self.metrics.eviction("refused" if "429" in why else "failed")
        self.scheduler.eviction_failed(key, why)

    def _read_configmap(self) -> dict[str, Any] | None:
        source = self.options.source
        return self.reader.configmap(source.namespace, source.name)
