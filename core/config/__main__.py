"""`python -m core.config`: check the queues.yaml on stdin; print `[allowed, reason, warnings]` as JSON.

The check is `check_config`, the one `herder validate` and the ConfigMap reload run; the
warnings come back whether the configuration is allowed or not.

The REST server's `validate-conf` runs this in a child interpreter (shim/rest/validation.py),
so a costly document costs that child, at a low CPU priority, never the scheduler. It
imports only `core.config`, so the child starts quickly.
"""

import json
import os
import sys

from core.config import check_config


def main() -> None:
    if hasattr(os, "nice"):
        os.nice(19)  # the scheduler and its probes come first
    text = sys.stdin.buffer.read().decode("utf-8")
    report = check_config(text)
    answer = (report.valid, "; ".join(report.problems), list(report.warnings))
    sys.stdout.write(json.dumps(answer))


main()
