"""Gang sources: the APIs a pod's gang is read from, one module each, all giving a PodGang
(pod_gang.py) the core turns into task groups.

    yunikorn.py              YuniKorn's annotations (task-groups, task-group-name,
                             schedulingPolicyParameters) and the placeholder pods Herder makes for them
    coscheduling.py          scheduler-plugins' PodGroup (scheduling.x-k8s.io), pods labelled with it
    volcano.py               Volcano's PodGroup (scheduling.volcano.sh), pods annotated with it
    kubernetes_pod_group.py  Kubernetes' PodGroup (scheduling.k8s.io, 1.36 on), spec.schedulingGroup
    kubernetes_workload.py   Kubernetes' Workload (scheduling.k8s.io/v1alpha1, 1.35), spec.workloadRef
    topology.py              Kueue's podset-required/preferred-topology annotations -> the gang's
                             topology; not a source: every source reads its pods' topology with it

The PodGroup APIs name an object (pod_gang.py's GroupRef) whose definition (GroupDefinition)
gives a gang from its pods; shim/convert/gang_sources.py puts them side by side. A new source
(a PodGroup API) goes in its own module beside these; sources never import each other
(topology.py is shared, not a source).
"""
