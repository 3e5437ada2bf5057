"""The conversion room: Kubernetes objects (plain dicts as the API returns them) -> the core's inputs.

Shared by the simulator and the kopf operator. One module per kind of object or part of a pod:

    objects.py        reading plain dicts (map_at, meta_of, ...) and the ConversionError all raise
    pod_view.py       a pod read once into a PodView, which every reader of a pod's parts takes
    pods.py           a pod -> an ask or an allocation, put together from its parts:
      pod_size.py       how much it occupies on its node
      constraints.py    where it may run (node selector, required node affinity, tolerations)
      priority.py       whether it may be preempted, what its PriorityClass adds
      rules.py          its rules between pods (affinity, spread, host ports)
      identity.py       its application, queue and user
      gang_sources.py   the group object it names (a PodGroup API), and its gang from that group
      gangs/            its gang, one module per gang API (gangs/yunikorn.py: YuniKorn's annotations;
                        coscheduling.py, volcano.py, kubernetes_pod_group.py, kubernetes_workload.py)
      storage.py        its claims; and StorageClasses, PersistentVolumes, PersistentVolumeClaims
      deadline.py       its activeDeadlineSeconds (when the kubelet ends it at the latest)
    sibling_asks.py   pods of one template (a Job's, a ReplicaSet's) share the first one's ask
    namespaces.py     a Namespace's annotations -> application tags
    nodes.py          a Node -> NodeInfo
    quotas.py         an ElasticQuota -> ElasticQuotaSpec (Koordinator's labels and annotations)
    budgets.py        a PodDisruptionBudget -> DisruptionBudget (which victims preemption prefers)
    resource_text.py  resource lists in annotations (JSON or seed 002's shorthand)

Callers import from the module that owns a name; this package re-exports nothing.
"""
