# shellcheck shell=bash
# Sourced by scripts/setup-kubernetes.sh: checking, starting and stopping the cluster.
#
# Needs everything setup-kubernetes.sh defines and the other files of scripts/kubernetes.

# kubectl for this cluster; its discovery cache stays in the state directory, not in ~/.kube.
kc() { "${BIN_DIR:-$LIB/bin}/kubectl" --kubeconfig "$KUBECONFIG_FILE" --cache-dir "$RUN/kubectl-cache" --request-timeout=10s "$@"; }
ctrk8s() { ctr --address "$RUN/containerd.sock" --namespace k8s.io "$@"; }
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet)

install_packages() {
  local missing=()
  command -v containerd >/dev/null 2>&1 && command -v ctr >/dev/null 2>&1 || missing+=(containerd)
  command -v containerd-shim-runc-v2 >/dev/null 2>&1 || missing+=(containerd)
  command -v runsc >/dev/null 2>&1 || missing+=(runsc)
  [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] || missing+=(containernetworking-plugins)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v ip >/dev/null 2>&1 || missing+=(iproute2)
  command -v python3 >/dev/null 2>&1 || missing+=(python3)
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # No init system here: keep containerd's postinst from starting the system instance.
    local policy=/usr/sbin/policy-rc.d created_policy=0
    if [ ! -e "$policy" ]; then
      printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1
    fi
    # shellcheck disable=SC2046 # one word per package
    apt-get install -y -qq --no-install-recommends $(printf '%s\n' "${missing[@]}" | sort -u) >/dev/null ||
      die "could not install ${missing[*]} (apt-get install ${missing[*]})"
    if [ "$created_policy" = 1 ]; then rm -f "$policy"; fi
  fi
  RUNSC="$(command -v runsc)"
}

# What the running cluster was started from: a different build, script or image restarts it.
spec_hash() {
  {
    cat "$here/setup-kubernetes.sh" "$here"/kubernetes/*.sh "$here"/kubernetes/*.py
    echo "$BIN_DIR $IMAGE"
  } | sha256sum | cut -c1-16
}

node_ready() {
  [ "$(kc get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}

# Sets WHY_DOWN and fails when any part is missing.
cluster_up() {
  local name
  WHY_DOWN=
  for name in "${COMPONENTS[@]}"; do
    running "$name" "$name" || {
      WHY_DOWN="$name is not running"
      return 1
    }
  done
  kc get --raw /readyz >/dev/null 2>&1 || {
    WHY_DOWN="the API server is not ready"
    return 1
  }
  node_ready || {
    WHY_DOWN="node $NODE_NAME is not Ready"
    return 1
  }
  kc get runtimeclass gvisor >/dev/null 2>&1 || {
    WHY_DOWN="RuntimeClass gvisor is missing"
    return 1
  }
  if [ -n "${BIN_DIR:-}" ]; then
    [ "$(cat "$RUN/spec" 2>/dev/null)" = "$(spec_hash)" ] || {
      WHY_DOWN="it was started from another build or version of this script"
      return 1
    }
    # An image rebuilt by setup-sandbox.sh since the start is imported again (pods keep running).
    if [ "$(cat "$LIB/imported-image" 2>/dev/null)" != "$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null)" ]; then
      import_sandbox_image
    fi
  fi
}

# The state of the host that the cluster must leave alone: firewall rules and network links.
host_network() {
  {
    command -v iptables-save >/dev/null 2>&1 && iptables-save 2>/dev/null
    command -v ip6tables-save >/dev/null 2>&1 && ip6tables-save 2>/dev/null
    ip -o link show | awk '{print $2}'
  } | grep -v '^#' | sed -E 's/\[[0-9]+:[0-9]+\]//' || true
}
# Shows what changed since the start, and fails, when anything did.
host_network_unchanged() {
  [ -f "$LIB/host-network" ] || return 0
  diff "$LIB/host-network" <(host_network) >&2
}

preflight() {
  local dir port
  for dir in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [ -d "$dir" ] && die "$dir exists: another kubelet runs on this machine (a real cluster?); use that one, or stop it"
  done
  for port in "$API_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT" "$CONTROLLER_MANAGER_PORT" "$SCHEDULER_PORT" "$KUBELET_PORT" "$KUBELET_HEALTHZ_PORT"; do
    if ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; then
      die "port $port on this machine is taken ($(ss -Hltnp "sport = :$port" | awk '{print $NF}' | head -n 1)); the cluster needs it"
    fi
  done
  command -v docker >/dev/null 2>&1 && docker image inspect "$IMAGE" >/dev/null 2>&1 ||
    die "the Docker engine has no image $IMAGE to import; run scripts/setup-sandbox.sh first"
}

start_cluster() {
  preflight
  # A start that fails half-way leaves nothing running (the logs stay).
  trap 'echo "[setup-kubernetes] the start failed; stopping what it started (logs: $LOGS)" >&2; stop_cluster' EXIT
  mkdir -p "$ETC" "$LIB" "$RUN/pids" "$LOGS"
  chmod 700 "$ETC" "$LIB" "$RUN"
  # Compared after the start and after --stop.
  host_network >"$LIB/host-network"
  # The previous start's logs are kept beside the new ones.
  for f in "$LOGS"/*.log; do [ -f "$f" ] && mv -f "$f" "$f.1"; done
  # Host paths the kubelet insists on (hard-coded in it); removed by --stop when made here.
  : >"$LIB/created-paths"
  for dir in /var/lib/kubelet/device-plugins /var/lib/kubelet /var/log/containers; do
    [ -e "$dir" ] || echo "$dir" >>"$LIB/created-paths"
  done

  pki_make
  pki_kubeconfig "$KUBECONFIG_FILE" admin
  pki_kubeconfig "$ETC/controller-manager.kubeconfig" controller-manager
  pki_kubeconfig "$ETC/scheduler.kubeconfig" scheduler
  pki_kubeconfig "$ETC/kubelet.kubeconfig" kubelet-client
  install_helpers
  write_containerd_config
  write_kubelet_config

  start_control_plane
  start_node

  log "creating RuntimeClass gvisor (handler runsc)"
  kc apply -f - >/dev/null <<EOF || die "could not create RuntimeClass gvisor"
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: { name: gvisor }
handler: runsc
EOF
  # The controller-manager makes every namespace's default ServiceAccount; pods wait for it.
  wait_for "the default ServiceAccount" 60 kube-controller-manager kc get serviceaccount default -n default
  spec_hash >"$RUN/spec"

  host_network_unchanged || die "the host's firewall rules or network links changed while the cluster started (above)"
  trap - EXIT
}

start_control_plane() {
  local etcd_tls=(--cert-file "$PKI/etcd.pem" --key-file "$PKI/etcd-key.pem" --trusted-ca-file "$PKI/ca.pem" --client-cert-auth
    --peer-cert-file "$PKI/etcd.pem" --peer-key-file "$PKI/etcd-key.pem" --peer-trusted-ca-file "$PKI/ca.pem" --peer-client-cert-auth)
  log "starting etcd on 127.0.0.1:$ETCD_PORT"
  start_process etcd "$BIN_DIR/etcd" --name local --data-dir "$LIB/etcd" "${etcd_tls[@]}" \
    --listen-client-urls "https://127.0.0.1:$ETCD_PORT" --advertise-client-urls "https://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "https://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "https://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "local=https://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new
  wait_for "etcd's health" 60 etcd curl -sf --cacert "$PKI/ca.pem" --cert "$PKI/apiserver-etcd-client.pem" \
    --key "$PKI/apiserver-etcd-client-key.pem" "https://127.0.0.1:$ETCD_PORT/health"

  log "starting the API server on https://127.0.0.1:$API_PORT"
  start_process kube-apiserver "$BIN_DIR/kube-apiserver" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
    --etcd-servers "https://127.0.0.1:$ETCD_PORT" --etcd-cafile "$PKI/ca.pem" \
    --etcd-certfile "$PKI/apiserver-etcd-client.pem" --etcd-keyfile "$PKI/apiserver-etcd-client-key.pem" \
    --tls-cert-file "$PKI/apiserver.pem" --tls-private-key-file "$PKI/apiserver-key.pem" --client-ca-file "$PKI/ca.pem" \
    --anonymous-auth=false --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$PKI/sa.pem" \
    --service-account-signing-key-file "$PKI/sa-key.pem" --service-cluster-ip-range "$SERVICE_RANGE" \
    --endpoint-reconciler-type none --allow-privileged=false --profiling=false \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.pem" --kubelet-client-key "$PKI/apiserver-kubelet-client-key.pem" \
    --kubelet-certificate-authority "$PKI/ca.pem"
  wait_for "the API server's /readyz" 120 kube-apiserver kc get --raw /readyz

  log "starting the controller-manager and the scheduler"
  local cm="$ETC/controller-manager.kubeconfig" sched="$ETC/scheduler.kubeconfig"
  start_process kube-controller-manager "$BIN_DIR/kube-controller-manager" --kubeconfig "$cm" \
    --authentication-kubeconfig "$cm" --authorization-kubeconfig "$cm" \
    --bind-address 127.0.0.1 --secure-port "$CONTROLLER_MANAGER_PORT" --leader-elect=false --profiling=false \
    --service-account-private-key-file "$PKI/sa-key.pem" --root-ca-file "$PKI/ca.pem" --use-service-account-credentials
  start_process kube-scheduler "$BIN_DIR/kube-scheduler" --kubeconfig "$sched" \
    --authentication-kubeconfig "$sched" --authorization-kubeconfig "$sched" \
    --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false --profiling=false
}

start_node() {
  start_containerd
  import_images
  start_kubelet
}

start_containerd() {
  log "starting containerd (socket $RUN/containerd.sock)"
  start_process containerd containerd --config "$ETC/containerd.toml"
  wait_for "containerd" 60 containerd ctr --address "$RUN/containerd.sock" version
}

start_kubelet() {
  # The kubelet sets six kernel settings when they differ from what it wants (vm.overcommit_memory,
  # kernel.panic, kernel.panic_on_oops, ...). It runs in a mount namespace of its own where those
  # files read as it wants them, so the host's stay as they are. Its volume mounts reach the host
  # (containerd) through a shared bind mount of its root directory.
  mkdir -p "$LIB/kubelet" "$RUN/sysctl"
  mountpoint -q "$LIB/kubelet" || mount --bind "$LIB/kubelet" "$LIB/kubelet"
  mount --make-shared "$LIB/kubelet"
  local binds="" setting wanted flat
  for setting in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
    kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
    wanted="${setting#*=}" setting="${setting%=*}"
    [ "$(cat "/proc/sys/$setting" 2>/dev/null)" = "$wanted" ] && continue
    flat="${setting//\//.}"
    echo "$wanted" >"$RUN/sysctl/$flat"
    binds="$binds mount --bind $RUN/sysctl/$flat /proc/sys/$setting &&"
  done
  log "starting the kubelet (node $NODE_NAME)"
  # PATH without sbin: the kubelet adds firewall rules wherever it finds iptables.
  start_process kubelet unshare --mount --propagation unchanged -- /bin/sh -c \
    "mount --make-rprivate /proc && $binds exec env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root \"\$@\"" kubelet \
    "$BIN_DIR/kubelet" --config "$ETC/kubelet.yaml" --kubeconfig "$ETC/kubelet.kubeconfig" \
    --hostname-override "$NODE_NAME" --root-dir "$LIB/kubelet" --cert-dir "$LIB/kubelet/pki"
  wait_for "node $NODE_NAME to be Ready" 120 kubelet node_ready
}

# A node restart as a crash does it: kill -9 of the kubelet and containerd (their shims and the
# pods' gVisor sandboxes live on), then both started again; the control plane is left alone.
restart_node() {
  local name pid
  for name in kubelet containerd; do
    pid="$(pid_of "$name")"
    alive "$pid" "" || die "$name is not running: start the cluster first"
    log "killing $name (pid $pid) with SIGKILL"
    kill -KILL "$pid"
    gone_within "$pid" 40 || die "$name (pid $pid) survived SIGKILL"
    rm -f "$RUN/pids/$name.pid"
  done
  start_containerd
  start_kubelet
}

import_images() {
  log "importing the pause image and $IMAGE into containerd"
  write_pause_image "$RUN/pause.tar" "$(dpkg --print-architecture 2>/dev/null || echo amd64)"
  ctrk8s images import "$RUN/pause.tar" >/dev/null || die "could not import the pause image"
  rm -f "$RUN/pause.tar"
  import_sandbox_image
}

import_sandbox_image() {
  local id
  id="$(docker image inspect -f '{{.Id}}' "$IMAGE")" || die "the Docker engine has no image $IMAGE"
  docker save "$IMAGE" | ctrk8s images import - >/dev/null || die "could not import $IMAGE (docker save | ctr import)"
  echo "$id" >"$LIB/imported-image"
  log "imported $IMAGE ($id)"
}

# The sockets containerd's shims made in the shared /run/containerd/s (each task's bundle names
# its shim's in a file `address`): a shim that was killed leaves its socket there.
shim_sockets() {
  local file address
  for file in "$RUN"/containerd/io.containerd.runtime.v2.task/*/*/address; do
    address="$(cat "$file" 2>/dev/null)" || continue
    [[ "$address" =~ ^unix://(/run/containerd/s/[0-9a-f]+)$ ]] && echo "${BASH_REMATCH[1]}"
  done
  return 0
}

stop_cluster() {
  local anything=0 sockets name
  [ -d "$RUN" ] || [ -d "$LIB" ] || [ -n "$(own_processes)" ] || [ -n "$(own_mounts)" ] || anything=1
  if [ "$anything" = 1 ]; then
    log "not running"
    return 0
  fi
  # The agent-sandbox controller (--agent-sandbox) first: it would make its pods again.
  stop_process agent-sandbox-controller
  # Pods first, through the kubelet: it stops their sandboxes and tears down their networks.
  if running kubelet kubelet && kc get --raw /readyz >/dev/null 2>&1; then
    if [ -n "$(kc get pods -A -o name 2>/dev/null)" ]; then
      log "deleting the pods"
      kc delete pods --all --all-namespaces --force --grace-period=0 --wait=false >/dev/null 2>&1 || true
      for _ in $(seq 1 60); do
        [ -z "$(ctrk8s tasks ls -q 2>/dev/null)" ] && break
        sleep 0.5
      done
    fi
  fi
  for name in kubelet containerd kube-scheduler kube-controller-manager kube-apiserver etcd; do
    stop_process "$name"
  done
  kill_own_processes
  local network_kept=0
  host_network_unchanged && network_kept=1
  sockets="$(shim_sockets)"
  for name in $sockets; do rm -f "$name"; done
  unmount_all
  remove_cgroups
  if [ -f "$LIB/created-paths" ]; then
    while IFS= read -r name; do
      [ -n "$name" ] && rm -rf "$name"
    done <"$LIB/created-paths"
  fi
  rm -rf "$RUN" "$LIB"
  rmdir "$(dirname "$RUN")" "$(dirname "$LIB")" 2>/dev/null || true
  [ "$network_kept" = 1 ] || die "the host's firewall rules or network links changed while the cluster ran (above)"
  log "stopped; no process, mount or cgroup of the cluster is left (binaries: $CACHE_DIR, kubeconfig: $KUBECONFIG_FILE)"
}
