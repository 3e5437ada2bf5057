"""The custom kind Herder reads and writes: the ElasticQuota's API group, version and plural.

One place for the names the watches, the webhooks' routes and the status writers all use.
"""

QUOTA_GROUP, QUOTA_VERSION, QUOTA_PLURAL = "scheduling.sigs.k8s.io", "v1alpha1", "elasticquotas"
