# shellcheck shell=bash
# Sourced by scripts/setup-kubernetes.sh (--agent-sandbox): kubernetes-sigs/agent-sandbox on the
# local cluster. Builds its controller from the Go module proxy (pinned in
# scripts/kubernetes/agent-sandbox-build/go.mod, checked by its go.sum) into the same cache as the
# cluster's binaries, applies its four CRDs (Sandbox; SandboxTemplate, SandboxClaim,
# SandboxWarmPool) from the same module, and runs the controller (core and extensions) as a
# process of the cluster with the admin kubeconfig, on loopback ports, its log in
# $LOGS/agent-sandbox-controller.log. --stop ends it with the rest; the CRDs go with etcd's data.
#
# Needs: log, die, CACHE_DIR, LOGS, RUN, KUBECONFIG_FILE, kc, module_go (build.sh), start_process,
# running, wait_for. Sets AGENT_SANDBOX_BIN.

AGENT_SANDBOX_VERSION=v1.0.1
AGENT_SANDBOX_MODULE="$(cd "$(dirname "${BASH_SOURCE[0]}")/agent-sandbox-build" && pwd)"
# Loopback ports away from the cluster's: its metrics and its health probe.
AGENT_SANDBOX_METRICS_PORT=20380
AGENT_SANDBOX_HEALTH_PORT=20381

agent_sandbox_key() {
  (cd "$AGENT_SANDBOX_MODULE" && cat go.mod go.sum) | sha256sum | cut -c1-16
}

# Builds the controller into $CACHE_DIR/agent-sandbox-<version>-<hash>/ and copies its CRDs there.
agent_sandbox_build() {
  local dir
  dir="$CACHE_DIR/agent-sandbox-$AGENT_SANDBOX_VERSION-$(agent_sandbox_key)"
  AGENT_SANDBOX_BIN="$dir/agent-sandbox-controller"
  AGENT_SANDBOX_CRDS="$dir/crds"
  if [ -x "$AGENT_SANDBOX_BIN" ] && [ -f "$dir/.complete" ]; then
    log "agent-sandbox controller is in $dir"
    return 0
  fi
  mkdir -p "$CACHE_DIR"
  local lock
  exec {lock}>"$CACHE_DIR/.build.lock"
  if ! flock -n "$lock"; then
    log "waiting for another build to finish"
    flock "$lock"
  fi
  if [ -x "$AGENT_SANDBOX_BIN" ] && [ -f "$dir/.complete" ]; then
    exec {lock}>&-
    return 0
  fi
  local go_bin version started=$SECONDS
  go_bin="$(command -v go || echo /usr/local/go/bin/go)"
  [ -x "$go_bin" ] || die "Go is missing: install Go 1.26 or newer (agent-sandbox $AGENT_SANDBOX_VERSION's go.mod asks 1.26.0)"
  version="$("$go_bin" env GOVERSION)"
  [[ "$version" =~ ^go1\.(2[6-9]|[3-9][0-9]) ]] || die "Go 1.26 or newer is needed to build agent-sandbox $AGENT_SANDBOX_VERSION, found $version"
  mkdir -p "$dir/crds" "$CACHE_DIR/go/mod" "$CACHE_DIR/go/build" "$CACHE_DIR/go/path"
  log "building the agent-sandbox controller $AGENT_SANDBOX_VERSION with $version (cold: about 3 minutes)"
  agent_sandbox_go "$go_bin" mod download -x >/dev/null 2>"$dir/download.log" || {
    tail -n 20 "$dir/download.log" >&2
    die "downloading the agent-sandbox modules failed (is the Go module proxy reachable? see $dir/download.log)"
  }
  agent_sandbox_go "$go_bin" build -o "$AGENT_SANDBOX_BIN.tmp" \
    -ldflags "-s -w -X sigs.k8s.io/agent-sandbox/internal/version.gitVersion=$AGENT_SANDBOX_VERSION" \
    sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller 2>"$dir/build.log" || {
    tail -n 20 "$dir/build.log" >&2
    die "building the agent-sandbox controller failed; see $dir/build.log"
  }
  mv "$AGENT_SANDBOX_BIN.tmp" "$AGENT_SANDBOX_BIN"
  local source
  source="$(agent_sandbox_go "$go_bin" list -m -f '{{.Dir}}' sigs.k8s.io/agent-sandbox)"
  cp "$source"/k8s/crds/*.yaml "$dir/crds/"
  chmod u+w "$dir"/crds/*.yaml
  touch "$dir/.complete"
  log "built the agent-sandbox controller in $((SECONDS - started)) s"
  exec {lock}>&-
}

# go in the agent-sandbox build module (settings fixed as for k8s_go: go.sum is never rewritten).
agent_sandbox_go() { module_go "$AGENT_SANDBOX_MODULE" "$@"; }

agent_sandbox_healthy() {
  curl -fsS --max-time 2 "http://127.0.0.1:$AGENT_SANDBOX_HEALTH_PORT/readyz" >/dev/null
}

agent_sandbox_crds_ready() {
  local crd
  for crd in sandboxes.agents.x-k8s.io sandboxtemplates.extensions.agents.x-k8s.io \
    sandboxclaims.extensions.agents.x-k8s.io sandboxwarmpools.extensions.agents.x-k8s.io; do
    [ "$(kc get crd "$crd" -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" = True ] || return 1
  done
}

# The CRDs are established and the controller runs and answers its readiness probe.
agent_sandbox_up() {
  running agent-sandbox-controller agent-sandbox-controller && agent_sandbox_healthy && agent_sandbox_crds_ready
}

# Applies the CRDs (server-side: their schemas are too big for the last-applied annotation) and
# starts the controller; idempotent.
agent_sandbox_start() {
  agent_sandbox_build
  if agent_sandbox_up; then
    log "agent-sandbox is up (controller pid $(pid_of agent-sandbox-controller))"
    return 0
  fi
  kc apply --server-side --force-conflicts -f "$AGENT_SANDBOX_CRDS" >/dev/null ||
    die "applying the agent-sandbox CRDs failed"
  wait_for "the agent-sandbox CRDs to be established" 30 "" agent_sandbox_crds_ready
  stop_process agent-sandbox-controller
  # One controller per cluster here: no leader election (it would want a Lease namespace).
  start_process agent-sandbox-controller "$AGENT_SANDBOX_BIN" \
    --kubeconfig "$KUBECONFIG_FILE" --extensions --leader-elect=false \
    --metrics-bind-address "127.0.0.1:$AGENT_SANDBOX_METRICS_PORT" \
    --health-probe-bind-address "127.0.0.1:$AGENT_SANDBOX_HEALTH_PORT"
  wait_for "the agent-sandbox controller to be ready" 60 agent-sandbox-controller agent_sandbox_healthy
  log "agent-sandbox $AGENT_SANDBOX_VERSION is up (log: $LOGS/agent-sandbox-controller.log)"
}
