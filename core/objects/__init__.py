"""The scheduler's objects: what it is told (asks, nodes, allocations) and what it keeps
(queues, applications, nodes, the partition that owns them)."""
