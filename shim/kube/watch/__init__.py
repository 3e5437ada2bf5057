"""Watching the cluster: what Herder learns from the API server and how it reaches the core.

The list-then-watch reflector for pods and nodes, the start-up listings, the shim's own cache of
pods, nodes and namespaces, the syncs that turn an object's current state into core inputs, and
the scheduler ConfigMap's reload. Nothing here writes to the API server: a refusal worth saying on
an object is handed to `write/` (the recorder), which says it.
"""
