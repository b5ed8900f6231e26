#!/usr/bin/env bash
# Build the storage components of the volume tests from the Go module proxy and cache them:
#   $CORRAL_BIN_CACHE (default ~/.cache/corral/bin)/storage-<provisioner>-driver-<hash>/
#     csi-provisioner csi-capacity-driver
# keyed by the pinned versions and a hash of csi-capacity-driver/'s source (a changed driver is
# rebuilt). A second run finds the stamp file and exits at once. Prints the directory on stdout;
# progress goes to stderr.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PINS="$(cd "$HERE/../../.." && pwd)/operator/corral/testing/versions.env"  # the one pins file
# shellcheck source=../../../operator/corral/testing/versions.env
source "$PINS"

DRIVER_SRC="$HERE/csi-capacity-driver"
DRIVER_HASH=$(cat "$DRIVER_SRC/go.mod" "$DRIVER_SRC/go.sum" "$DRIVER_SRC/main.go" | sha256sum | cut -c1-12)
CACHE_ROOT=${CORRAL_BIN_CACHE:-$HOME/.cache/corral/bin}
OUT="$CACHE_ROOT/storage-$EXTERNAL_PROVISIONER_VERSION-driver-$DRIVER_HASH"
STAMP="$OUT/.complete"

log() { printf '[build-storage %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ -f "$STAMP" || -n "${CORRAL_STORAGE_PROBE:-}" ]]; then  # the probe only asks where
  [[ -f "$STAMP" ]] && log "cached: $OUT"
  echo "$OUT"
  exit 0
fi
command -v go >/dev/null 2>&1 || die "the Go toolchain is required to build the storage components"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/corral-storage-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
started=$SECONDS
step() { log "[$1] $2 (elapsed $((SECONDS - started))s)"; }

# external-provisioner's go.mod carries replaces: build it as the main module, from a copy.
step 1/2 "building csi-provisioner $EXTERNAL_PROVISIONER_VERSION"
module=github.com/kubernetes-csi/external-provisioner/v6
go mod download "$module@$EXTERNAL_PROVISIONER_VERSION"
cp -r "$(go env GOMODCACHE)/$module@$EXTERNAL_PROVISIONER_VERSION" "$WORK/provisioner"
chmod -R u+w "$WORK/provisioner"
(cd "$WORK/provisioner" && go build -trimpath -ldflags "-X main.version=$EXTERNAL_PROVISIONER_VERSION" \
  -o "$OUT/csi-provisioner" ./cmd/csi-provisioner)

step 2/2 "building csi-capacity-driver (csi-test $CSI_TEST_VERSION)"
cp -r "$DRIVER_SRC" "$WORK/driver"
(cd "$WORK/driver" && go build -trimpath -o "$OUT/csi-capacity-driver" .)

touch "$STAMP"
log "done in $((SECONDS - started))s: $OUT"
echo "$OUT"
