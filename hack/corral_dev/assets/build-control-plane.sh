#!/usr/bin/env bash
# Build the local control plane binaries from the Go module proxy and cache them by version:
#   $CORRAL_BIN_CACHE (default ~/.cache/corral/bin)/k8s-<kube>-etcd-<etcd>-kwok-<kwok>/
#     kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok
# A second run with the same versions finds the stamp file and exits at once.
# Prints the directory on stdout; progress goes to stderr.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PINS="$(cd "$HERE/../../.." && pwd)/operator/corral/testing/versions.env"  # the one pins file
# shellcheck source=../../../operator/corral/testing/versions.env
source "${CORRAL_VERSIONS_FILE:-$PINS}"  # another pins file: hack/compat

CACHE_ROOT=${CORRAL_BIN_CACHE:-$HOME/.cache/corral/bin}
OUT="$CACHE_ROOT/k8s-$KUBE_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"
STAMP="$OUT/.complete"

log() { printf '[build-control-plane %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ -f "$STAMP" ]]; then
  log "cached: $OUT"
  echo "$OUT"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "the Go toolchain is required to build the local control plane \
(any go >= 1.21 fetches $GO_TOOLCHAIN, which Kubernetes $KUBE_VERSION needs). Install Go and make sure
'go' is on PATH."

export GOTOOLCHAIN=$GO_TOOLCHAIN CGO_ENABLED=0 GOFLAGS=-mod=mod
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/corral-cp-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
started=$SECONDS

step() { log "[$1] $2 (elapsed $((SECONDS - started))s)"; }

# --- Kubernetes: a wrapper module that maps every staging module to v0.<minor>.<patch>.
step 1/4 "resolving k8s.io/kubernetes@$KUBE_VERSION and its staging modules"
# shellcheck source=k8s-module.sh
source "$HERE/k8s-module.sh"
k8s_module "$WORK/k8s"
LDF=$K8S_LDFLAGS
log "building 4 binaries; the first (kube-apiserver) compiles most of Kubernetes and takes longest"
n=0
for cmd in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  n=$((n + 1))
  step "2/4" "building $cmd ($n of 4)"
  go build -trimpath -ldflags "$LDF" -o "$OUT/$cmd" "k8s.io/kubernetes/cmd/$cmd"
done

# --- etcd: server/v3 carries replaces in its own go.mod, so it also needs a wrapper module.
step 3/4 "building etcd $ETCD_VERSION"
mkdir -p "$WORK/etcd" && cd "$WORK/etcd"
go mod init local/corral-etcdbin >/dev/null 2>&1
go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2
go build -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" \
  -o "$OUT/etcd" go.etcd.io/etcd/server/v3

# --- kwok: no replaces, so a plain install into a private GOBIN works.
step 4/4 "building kwok $KWOK_VERSION"
GOBIN="$OUT" go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
# Keep kwok's default Stage manifests next to the binary: standalone kwok needs them.
STAGES=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage
{
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
           pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"; cat "$STAGES/$f"
  done
} > "$OUT/kwok-stages.yaml"

"$OUT/kube-apiserver" --version >&2
"$OUT/etcd" --version | sed -n 1p >&2  # not head: etcd would die of SIGPIPE, and pipefail with it
touch "$STAMP"
log "done in $((SECONDS - started))s: $OUT"
echo "$OUT"
