#!/usr/bin/env bash
# Create a kind cluster, build and load the Herder image, install the chart and run the e2e suite.
# Needs docker and kind on PATH; helm and kubectl come from .ci/install-tools.sh.
# Environment: KIND_NODE_IMAGE (e.g. kindest/node:v1.33.1), KEEP_CLUSTER=1 to keep it afterwards.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cluster="${KIND_CLUSTER:-herder-e2e}"
image="herder:e2e"
namespace="herder-system"

"$root/.ci/install-tools.sh" >/dev/null
export PATH="$root/.tools/bin:$PATH"
export KUBECONFIG="${KUBECONFIG:-$root/.tools/kubeconfig-$cluster}"

cleanup() { [[ "${KEEP_CLUSTER:-0}" == 1 ]] || kind delete cluster --name "$cluster"; }
trap cleanup EXIT

kind create cluster --name "$cluster" --config "$root/e2e/kind.yaml" --kubeconfig "$KUBECONFIG" \
  ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"} --wait 120s
docker build -t "$image" "$root"
kind load docker-image "$image" --name "$cluster"
docker pull registry.k8s.io/pause:3.10
kind load docker-image registry.k8s.io/pause:3.10 --name "$cluster"

helm install herder "$root/deploy/helm/herder" --namespace "$namespace" --create-namespace \
  --set image.repository=herder --set image.tag=e2e --set image.pullPolicy=Never \
  --set-string 'settings.quota\.recycle\.delay=5s' \
  --set-file queues="$root/e2e/queues.yaml" \
  --wait --timeout 180s
kubectl -n "$namespace" rollout status deployment/herder --timeout 180s

HERDER_E2E_BACKEND=kubeconfig HERDER_NAMESPACE="$namespace" \
  python -m pytest "$root/e2e" -q -p no:cacheprovider "$@"
