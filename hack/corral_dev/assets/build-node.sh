#!/usr/bin/env bash
# Build the real node's binaries from the Go module proxy and cache them by version:
#   $CORRAL_BIN_CACHE (default ~/.cache/corral/bin)/node-k8s-<kube>-containerd-<containerd>/
#     kubelet kube-proxy containerd containerd-shim-runc-v2 ctr pause
# kubelet and kube-proxy come from the same wrapper module as build-control-plane.sh (staging
# modules mapped to v0.<minor>.<patch>); pause is Kubernetes' own pause.c, linked statically.
# A second run with the same versions finds the stamp file and exits at once.
# Prints the directory on stdout; progress goes to stderr.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PINS="$(cd "$HERE/../../.." && pwd)/operator/corral/testing/versions.env"  # the one pins file
# shellcheck source=../../../operator/corral/testing/versions.env
source "${CORRAL_VERSIONS_FILE:-$PINS}"  # another pins file: hack/compat

CACHE_ROOT=${CORRAL_BIN_CACHE:-$HOME/.cache/corral/bin}
OUT="$CACHE_ROOT/node-k8s-$KUBE_VERSION-containerd-$CONTAINERD_VERSION"
STAMP="$OUT/.complete"

log() { printf '[build-node %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ -f "$STAMP" ]]; then
  log "cached: $OUT"
  echo "$OUT"
  exit 0
fi
command -v go >/dev/null 2>&1 || die "the Go toolchain is required to build the node binaries"
command -v cc >/dev/null 2>&1 || die "a C compiler (cc) is required to build the pause binary"

export GOTOOLCHAIN=$GO_TOOLCHAIN CGO_ENABLED=0 GOFLAGS=-mod=mod
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/corral-node-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
started=$SECONDS
step() { log "[$1] $2 (elapsed $((SECONDS - started))s)"; }

step 1/3 "resolving k8s.io/kubernetes@$KUBE_VERSION and its staging modules"
# shellcheck source=k8s-module.sh
source "$HERE/k8s-module.sh"
k8s_module "$WORK/k8s"
LDF=$K8S_LDFLAGS
for cmd in kubelet kube-proxy; do
  step 2/3 "building $cmd $KUBE_VERSION"
  go build -trimpath -ldflags "$LDF" -o "$OUT/$cmd" "k8s.io/kubernetes/cmd/$cmd"
done
K8S_SRC=$(go list -m -f '{{.Dir}}' k8s.io/kubernetes)
cc -Os -static -DVERSION="$KUBE_VERSION-corral" -o "$OUT/pause" "$K8S_SRC/build/pause/linux/pause.c"

step 3/3 "building containerd $CONTAINERD_VERSION (containerd, containerd-shim-runc-v2, ctr)"
CTRD=github.com/containerd/containerd/v2
CTRD_LDF="-s -w -X $CTRD/version.Version=$CONTAINERD_VERSION"
for cmd in containerd containerd-shim-runc-v2 ctr; do
  GOBIN="$OUT" go install -trimpath -ldflags "$CTRD_LDF" "$CTRD/cmd/$cmd@$CONTAINERD_VERSION"
done

"$OUT/kubelet" --version >&2
"$OUT/containerd" --version >&2
touch "$STAMP"
log "done in $((SECONDS - started))s: $OUT"
echo "$OUT"
