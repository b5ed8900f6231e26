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
# shellcheck source=versions.env
source "$HERE/versions.env"

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

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/corral-node-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
started=$SECONDS
step() { log "[$1] $2 (elapsed $((SECONDS - started))s)"; }

step 1/3 "resolving k8s.io/kubernetes@$KUBE_VERSION and its staging modules"
mkdir -p "$WORK/k8s" && cd "$WORK/k8s"
go mod init local/corral-nodebin >/dev/null 2>&1
GOMOD=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
[[ -f "$GOMOD" ]] || die "could not download k8s.io/kubernetes@$KUBE_VERSION from the Go module proxy"
STAGING_VERSION="v0.${KUBE_VERSION#v1.}"
mapfile -t staging < <(sed -n 's|^[[:space:]]*\(k8s.io/[^[:space:]]*\) => ./staging/src/.*|\1|p' "$GOMOD")
[[ ${#staging[@]} -gt 0 ]] || die "found no staging replaces in $GOMOD"
for m in "${staging[@]}"; do
  go mod edit -replace="$m=$m@$STAGING_VERSION"
done
go get "k8s.io/kubernetes@$KUBE_VERSION" >&2
MINOR=$(echo "$KUBE_VERSION" | cut -d. -f2)
LDF="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDF="$LDF -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$MINOR"
  LDF="$LDF -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
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
