"""What if: the live cluster as a scenario (`herder snapshot`), history as a trace (`herder trace`).

`snapshot` turns a cluster's objects into a scenario `herder simulate` runs; `sources` reads
them from the API server or from a running Herder's REST state dump; `anonymize` renames
namespaces, users and pods consistently so a snapshot can be shared; `pod_history` turns
`kubectl get pods -A -o json` into a workload trace (shim/sim/trace.py reads it).
"""
