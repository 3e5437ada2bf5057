"""Writing to the cluster: the only room whose modules send writes to the API server.

Pod bindings and evictions (over kept-alive connections), the Lease's store, the status writers
(ElasticQuota status, the `PodScheduled` condition, pod Events) and the refusal recorder. Each
write is queued by the core's callbacks or by a writer's own thread, so a slow API server never
blocks a scheduling cycle. A test checks that no module outside `write/` and `admission/` calls an
API server write.
"""
