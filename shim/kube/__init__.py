"""The Kubernetes shim: the scheduler core wired to a cluster, in rooms by what they do to it.

- `watch/`: what Herder reads (the pod and node reflector, listings, cache, syncs to the core,
  the ConfigMap's reload);
- `write/`: what Herder writes (bindings, evictions, the Lease, statuses, Events): the only room
  that sends writes to the API server;
- `admission/`: the webhooks, whose only words back are AdmissionReview responses;
- `leader/`: the election and the loops that run only on the leader;
- at the top, the wiring: `operator.py` (one replica's parts), `handlers.py` (kopf's handlers and
  settings), `extensions.py` (REST, webhooks, status writers), `housekeeping.py`, `run.py`
  (`herder run`), `kinds.py` and `permissions.py` (what the shim touches, for the chart's RBAC).

Imports go down: the wiring imports the rooms; `watch/` and `admission/` may use `write/`,
never each other; `write/` uses the election's types from `leader/`, which imports none of the
rooms and no HTTP client. pyproject.toml's import contracts say so.
docs/architecture.md has the map.
"""
