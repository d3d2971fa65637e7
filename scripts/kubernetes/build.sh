# shellcheck shell=bash
# Sourced by scripts/setup-kubernetes.sh: builds the cluster's binaries from the Go module proxy
# into a cache, checked against scripts/kubernetes/build/go.sum (-mod=readonly: a module whose
# checksum is not there, or differs, stops the build).
#
# Needs: log, die, K8S_VERSION, CACHE_DIR. Sets BIN_DIR.
#
# The binaries live in $CACHE_DIR/$K8S_VERSION-<hash of go.mod, go.sum and pause/>/bin, so a
# second run (or a run after --stop) links nothing. Go's module and build caches are kept under
# $CACHE_DIR too: a machine that lost the binaries but kept the caches relinks in about 20 s.
# Cold (empty caches, 2 shared cores) it took 8-10 minutes; kube-apiserver alone compiles most of
# the shared packages. One binary at a time: one build peaks at about 1.9 GiB.

K8S_BUILD_MODULE="$(cd "$(dirname "${BASH_SOURCE[0]}")/build" && pwd)"
K8S_BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl etcd pause)

k8s_package_of() {
  case "$1" in
  etcd) echo go.etcd.io/etcd/server/v3 ;;
  pause) echo ./pause ;;
  *) echo "k8s.io/kubernetes/cmd/$1" ;;
  esac
}

k8s_build_key() {
  (cd "$K8S_BUILD_MODULE" && cat go.mod go.sum pause/main.go) | sha256sum | cut -c1-16
}

k8s_binaries_ready() {
  local name
  [ -f "$BIN_DIR/.complete" ] || return 1
  for name in "${K8S_BINARIES[@]}"; do [ -x "$BIN_DIR/$name" ] || return 1; done
}

k8s_build() {
  BIN_DIR="$CACHE_DIR/$K8S_VERSION-$(k8s_build_key)/bin"
  if k8s_binaries_ready; then
    log "binaries are in $BIN_DIR"
    return 0
  fi
  # One build at a time (CI starts one in the background early): a second waits for the first
  # and then finds its binaries.
  mkdir -p "$CACHE_DIR"
  local lock
  exec {lock}>"$CACHE_DIR/.build.lock"
  if ! flock -n "$lock"; then
    log "waiting for another build of the binaries to finish"
    flock "$lock"
  fi
  if k8s_binaries_ready; then
    log "binaries are in $BIN_DIR"
    exec {lock}>&-
    return 0
  fi
  command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] ||
    die "Go is missing: install Go 1.24 or newer (the build module is $K8S_BUILD_MODULE)"
  local go_bin version
  go_bin="$(command -v go || echo /usr/local/go/bin/go)"
  version="$("$go_bin" env GOVERSION)"
  [[ "$version" =~ ^go1\.(2[4-9]|[3-9][0-9]) ]] || die "Go 1.24 or newer is needed to build Kubernetes $K8S_VERSION, found $version"
  mkdir -p "$BIN_DIR" "$CACHE_DIR/go/mod" "$CACHE_DIR/go/build" "$CACHE_DIR/go/path"
  log "building Kubernetes $K8S_VERSION and etcd with $version into $BIN_DIR (cold: 8-10 minutes, one binary at a time)"
  local name started=$SECONDS one
  # The module's dependencies first: a checksum mismatch shows here, before any compiling.
  k8s_go "$go_bin" mod download -x >/dev/null 2>"$CACHE_DIR/download.log" || {
    tail -n 20 "$CACHE_DIR/download.log" >&2
    die "downloading the Kubernetes modules failed (is the Go module proxy reachable? see $CACHE_DIR/download.log)"
  }
  log "modules verified against go.sum in $((SECONDS - started)) s"
  for name in "${K8S_BINARIES[@]}"; do
    [ -x "$BIN_DIR/$name" ] && continue
    one=$SECONDS
    k8s_go "$go_bin" build -o "$BIN_DIR/$name.tmp" \
      -ldflags "-s -w $(k8s_version_flags)" "$(k8s_package_of "$name")" 2>"$CACHE_DIR/build-$name.log" || {
      tail -n 20 "$CACHE_DIR/build-$name.log" >&2
      die "building $name failed; see $CACHE_DIR/build-$name.log"
    }
    mv "$BIN_DIR/$name.tmp" "$BIN_DIR/$name"
    log "built $name in $((SECONDS - one)) s"
  done
  touch "$BIN_DIR/.complete"
  # Binaries of other versions of the build module are not used any more (about 400 MiB each).
  local dir
  for dir in "$CACHE_DIR"/v*-*; do
    [ -d "$dir" ] && [ "$dir" != "$(dirname "$BIN_DIR")" ] && rm -rf "$dir"
  done
  log "built everything in $((SECONDS - started)) s"
  exec {lock}>&-
}

# Runs go in a build module with every setting that matters fixed here, not taken from the
# caller's environment: static binaries, no toolchain download, go.sum never rewritten.
#   module_go MODULE_DIR GO_BIN ARGS...
module_go() {
  local module="$1" go_bin="$2"
  shift 2
  (cd "$module" && env -u GOFLAGS -u GONOSUMDB -u GONOSUMCHECK -u GOINSECURE \
    GOENV=off GOTOOLCHAIN=local CGO_ENABLED=0 GOOS=linux GOWORK=off \
    GOFLAGS="-mod=readonly -modcacherw -trimpath" \
    GOMODCACHE="$CACHE_DIR/go/mod" GOCACHE="$CACHE_DIR/go/build" GOPATH="$CACHE_DIR/go/path" \
    "$go_bin" "$@")
}

# go in the Kubernetes build module.
k8s_go() { module_go "$K8S_BUILD_MODULE" "$@"; }

# What `kubectl version` and the node status report (the module build has no git tree to ask).
k8s_version_flags() {
  local v="${K8S_VERSION#v}" p=k8s.io/component-base/version
  echo "-X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=${v%%.*} -X $p.gitMinor=$(echo "$v" | cut -d. -f2) -X $p.gitTreeState=clean"
}
