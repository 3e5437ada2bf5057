"""Gang sources: the APIs a pod's gang is read from, one module each, all giving a PodGang
(pod_gang.py) the core turns into task groups.

    yunikorn.py   YuniKorn's annotations (task-groups, task-group-name, schedulingPolicyParameters)
                  and the placeholder pods Herder makes for them
    topology.py   Kueue's podset-required/preferred-topology annotations -> the gang's topology;
                  not a source: every source reads its pods' topology with it

A new source (a PodGroup API) goes in its own module beside these; sources never import each other
(topology.py is shared, not a source).
"""
