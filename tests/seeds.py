"""The seeds' own examples, copied verbatim (indentation included), one constant each, named
by seed and section, for the tests that run them (tests/sim/test_seed_examples.py and others)."""

# Seed 004, "Converting Kubernetes resources and quotas": the example pod, verbatim.
SEED_004_POD = """
apiVersion: v1
kind: Pod
spec:
  containers:
  - name: container-1
    resources:
      requests:
        cpu: "250m"
        memory: "1Gi"
        hugepages-1Gi: "1"
"""

# Seed 004, "Static queue definition": the configuration, verbatim.
SEED_004_STATIC = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: advertisement
            resources:
              guaranteed:
                memory: 500000
                vcore: 50000
              max:
                memory: 800000
                vcore: 80000
          - name: search
            resources:
              guaranteed:
                memory: 400000
                vcore: 40000
              max:
                memory: 600000
                vcore: 60000
          - name: sandbox
            resources:
              guaranteed:
                memory: 100000
                vcore: 10000
              max:
                memory: 100000
                vcore: 10000
"""

# Seed 004, "Static queue definition", "Run a workload": the labels, verbatim.
SEED_004_LABELS = """
labels:
  app: my-test-app
  applicationId: "my-test-app-01"
  queue: root.sandbox
"""

# Seed 004, "Namespace to queue mapping": the configuration and the namespace annotations, verbatim.
SEED_004_NAMESPACE_MAPPING = """
partitions:
  - name: default
    placementrules:
      - name: tag
        value: namespace
        create: true
    queues:
      - name: root
        submitacl: '*'
        properties:
          application.sort.policy: stateaware
"""

SEED_004_NAMESPACE_QUOTA = """
yunikorn.apache.org/namespace.max.cpu: "64"
yunikorn.apache.org/namespace.max.memory: "100Gi"
"""

# Seed 004, "Parent queue mapping for namespaces": the configuration and the annotation, verbatim.
SEED_004_PARENT_MAPPING = """
partitions:
  - name: default
    placementrules:
    - name: tag
      value: namespace
      create: true
      parent:
      - name: tag
        value: namespace.parentqueue
    queues:
    - name: root
      queues:
      - name: production
      - name: development
"""

SEED_004_PARENT_ANNOTATION = """
yunikorn.apache.org/parentqueue: root.production
"""

# Seed 002, "API", its example ElasticQuota (the text lost the keys' names; they are Koordinator's).
SEED_002_QUOTA = """
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: test
  namespace: test
  annotations:
    quota.scheduling.koordinator.sh/runtime: "{cpu:4, memory: 8Gi}"
    quota.scheduling.koordinator.sh/shared-weight: "{cpu:4, memory: 8Gi}"
  labels:
    quota.scheduling.koordinator.sh/is-parent: "false"
    quota.scheduling.koordinator.sh/parent: "parent"
    quota.scheduling.koordinator.sh/allow-lent-resource: "true"
spec:
  max:
    cpu: 20
    memory: 40Gi
  min:
    cpu: 10
    memory: 20Gi
"""

SEED_002_PARENT = """
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: parent
  namespace: test
  labels:
    quota.scheduling.koordinator.sh/is-parent: "true"
spec:
  max: {cpu: 40, memory: 80Gi}
  min: {cpu: 20, memory: 40Gi}
"""
