"""Herder's read-only REST API and `/metrics`, on YuniKorn's paths and JSON field names.

The public surface is these names; the operator and the simulator need nothing else:

    from shim.rest import RestStatus, ShimMetrics, build_rest_app, start_rest_server

    status = RestStatus(identity="herder-0")    # flip status.synced / status.leader as they change
    shim_metrics = ShimMetrics()                 # binder: observe_bind(s), bind_error(reason);
                                                 # evictor: eviction(result)
    app = build_rest_app(scheduler, status, shim_metrics)
    runner = await start_rest_server(app, "0.0.0.0", 9080)
    ...
    await runner.cleanup()

or, on a thread and event loop of its own (`herder run`, `herder simulate --serve`):

    server = RestThread(backend, "0.0.0.0", 9080)   # backend: .scheduler, .status, .metrics
    server.start()  ...  server.stop()

Endpoints (docs/rest-api.md has an example of each):

- `/ws/v1/partitions`, `/ws/v1/partition/{p}/queues`, `.../queue/{q}`, `.../placementrules`,
  `.../applications[/{state}]`, `.../queue/{q}/applications[/{state}]`, `.../application/{id}`,
  `.../nodes`, `.../node/{id}`, `.../usage/users`, `.../usage/user/{u}`, `.../usage/groups`,
  `.../usage/group/{g}` (module `partition`, `usage`);
- `/ws/v1/clusters`, `/ws/v1/history/apps`, `/ws/v1/history/containers`,
  `/ws/v1/scheduler/node-utilizations` (module `cluster`: YuniKorn's dashboard);
- `/ws/v1/events/batch`, `/ws/v1/events/stream` (module `events`);
- Herder's own `/ws/v1/partition/{p}[/queue/{q}]/pending` and `.../explain?pod=` (module
  `pending`: why pods wait and where they are in line);
- `/ws/v1/quotas`, `/ws/v1/fullstatedump`, `/ws/v1/config`,
  `POST /ws/v1/validate-conf`, `/ws/v1/scheduler/healthcheck`, `/healthz`, `/readyz`,
  `/metrics` (module `service`; metric families in `shim.metrics`).

Unknown objects answer 404 and bad input 400, both with YuniKorn's error body (`errors`).
Handlers read the scheduler on the application's own threads, never on the event loop
(`context`).
"""

from shim.metrics import ShimMetrics
from shim.rest.app import DEFAULT_PORT, build_rest_app, start_rest_server
from shim.rest.server import RestBackend, RestThread
from shim.rest.status import RestStatus

__all__ = [
    "DEFAULT_PORT",
    "RestBackend",
    "RestStatus",
    "RestThread",
    "ShimMetrics",
    "build_rest_app",
    "start_rest_server",
]
