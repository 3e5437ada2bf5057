"""Admission: the webhooks the API server calls before it stores a pod, a workload or an ElasticQuota.

`decisions.py` holds the pure decisions over an AdmissionReview's `request`; `quota.py` applies
the core's quota-tree rules; `webhooks.py` registers the routes in kopf and serves them over
HTTPS; `direct.py` answers the routes whose objects kopf does not watch. The only thing this room
says back to the API server is its AdmissionReview responses.
"""
