# Sourced by build-control-plane.sh and build-node.sh (needs log and die defined, KUBE_VERSION set,
# and GOTOOLCHAIN exported as versions.env's GO_TOOLCHAIN: Kubernetes 1.37.2 needs go1.27.3).
# k8s_module DIR: make DIR a wrapper Go module that requires k8s.io/kubernetes@$KUBE_VERSION with
# every staging module (replaced by ./staging/src/... upstream) mapped to v0.<minor>.<patch>, and
# set K8S_LDFLAGS to the version stamps `kubectl version` and `--version` print.
k8s_module() {
  [[ ${GOTOOLCHAIN:-} == go* ]] || die "GOTOOLCHAIN must name the pinned toolchain (GO_TOOLCHAIN in versions.env)"
  mkdir -p "$1" && cd "$1"
  go mod init local/corral-k8sbin >/dev/null 2>&1
  local gomod staging_version m
  gomod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [[ -f "$gomod" ]] || die "could not download k8s.io/kubernetes@$KUBE_VERSION from the Go module proxy"
  staging_version="v0.${KUBE_VERSION#v1.}"
  mapfile -t staging < <(sed -n 's|^[[:space:]]*\(k8s.io/[^[:space:]]*\) => ./staging/src/.*|\1|p' "$gomod")
  [[ ${#staging[@]} -gt 0 ]] || die "found no staging replaces in $gomod"
  for m in "${staging[@]}"; do
    go mod edit -replace="$m=$m@$staging_version"
  done
  log "mapped ${#staging[@]} staging modules to $staging_version"
  go get "k8s.io/kubernetes@$KUBE_VERSION" >&2
  local minor p
  minor=$(echo "$KUBE_VERSION" | cut -d. -f2)
  K8S_LDFLAGS="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    K8S_LDFLAGS="$K8S_LDFLAGS -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    K8S_LDFLAGS="$K8S_LDFLAGS -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
}
