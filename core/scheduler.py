"""The core's public interface: one `Scheduler` per partition.

INTERFACE CONTRACT (bodies being written; the signatures below are fixed):

Inputs are thread-safe and cheap: they record and return; placement happens in `schedule()`.
Outputs go through the `Callbacks` object the shim (or simulator) provides.

    sched = Scheduler(callbacks, config=None, settings=None, clock=time.monotonic)
    sched.update_config(cfg: SchedulerConfig)        # raises ConfigError, nothing changes then
    sched.update_settings(settings: Settings)
    sched.update_node(NodeInfo) / sched.remove_node(node_id)
    sched.add_ask(Ask) / sched.remove_ask(key)
    sched.add_allocation(Allocation)                 # recovery (ask set) or foreign (foreign set)
    sched.release_allocation(key)                    # pod gone/finished, or failed bind: roll back
    sched.eviction_failed(key, reason)               # e.g. PodDisruptionBudget refused
    sched.update_quota(ElasticQuotaSpec)             # raises QuotaValidationError, old tree kept
    sched.remove_quota(name)                         # raises QuotaValidationError
    sched.schedule(now=None) -> int                  # one synchronous cycle; allocations made
    sched.recycle(now=None) -> int                   # one recycler tick; evictions asked
    sched.has_work() -> bool                         # something changed since the last cycle
    sched.pending_reason(key) -> str | None
    sched.events: EventRing ; sched.metrics: SchedulerMetrics
    sched.state_dump() -> dict                       # GET /ws/v1/fullstatedump document
"""
