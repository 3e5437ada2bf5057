"""Herder's scheduling core: pure Python, no Kubernetes, kopf or shim imports (checked by import-linter)."""
