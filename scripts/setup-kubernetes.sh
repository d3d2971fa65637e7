#!/usr/bin/env bash
# A single-node Kubernetes cluster on this machine (root) whose pods run under gVisor, for the
# tests of the Kubernetes sandbox engine. A user with a real cluster does not need it.
#
#   sudo bash scripts/setup-kubernetes.sh            # build (once), start, check
#   sudo bash scripts/setup-kubernetes.sh --status   # up or not (exit 0 when up)
#   sudo bash scripts/setup-kubernetes.sh --stop     # stop it and remove what it made
#
# From registry packages only: Kubernetes and etcd built from the Go module proxy (pinned in
# scripts/kubernetes/build/go.mod, checked by go.sum) into /var/cache/ai-toolbelt/kubernetes;
# Debian's containerd (a second instance: its own config, root, state and socket; the Docker
# engine's is left alone), runsc and CNI plugins. It starts etcd, the API server (its own CA and
# service-account keys), the controller-manager, the scheduler, containerd and a kubelet, all on
# 127.0.0.1; creates RuntimeClass `gvisor` (handler runsc); imports the sandbox image from the
# Docker engine (pods use it with imagePullPolicy: Never); writes a kubeconfig.
#
# Idempotent: with the cluster up, a run only checks it. The host's firewall, network and kernel
# settings are not changed. --stop ends every process it started and removes every mount, cgroup
# and state directory it made; the binaries, certificates and kubeconfig stay for the next start.
#
# Options:
#   --status        print whether the cluster is up; exit 0 when it is, 1 when not
#   --stop          stop the cluster and remove what it made
#   --image NAME    the sandbox image to import (default: the one setup-sandbox.sh builds)
#   --build-only    build the binaries into the cache and exit (CI starts this early, in the
#                   background; a later run waits for it)
#   --restart-node  kill -9 the kubelet and containerd and start them again, as a node crash and
#                   reboot would (the pods' gVisor sandboxes live on); for the tests
#   --agent-sandbox also build (once, about 3 minutes cold) and run kubernetes-sigs/agent-sandbox:
#                   its CRDs and its controller, a process of the cluster (see
#                   scripts/kubernetes/agent-sandbox.sh); with --build-only, build it too
#
# Environment:
#   AI_TOOLBELT_SANDBOX_IMAGE  the sandbox image (as for setup-sandbox.sh)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
STOP=0
STATUS=0
BUILD_ONLY=0
RESTART_NODE=0
AGENT_SANDBOX=0
IMAGE=
while [ "$#" -gt 0 ]; do
  case "$1" in
  --stop) STOP=1 && shift ;;
  --status) STATUS=1 && shift ;;
  --image) IMAGE="${2:?--image needs a name}" && shift 2 ;;
  --build-only) BUILD_ONLY=1 && shift ;;
  --restart-node) RESTART_NODE=1 && shift ;;
  --agent-sandbox) AGENT_SANDBOX=1 && shift ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' && exit 0 ;;
  *) echo "[setup-kubernetes] ERROR: unknown argument $1 (known: --status, --stop, --image NAME, --build-only, --restart-node, --agent-sandbox)" >&2 && exit 2 ;;
  esac
done

log() { echo "[setup-kubernetes] $*"; }
die() {
  echo "[setup-kubernetes] ERROR: $*" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || die "run as root (sudo bash $0): the kubelet and containerd mount file systems and make cgroups"

K8S_VERSION=v1.34.4
ETC=/etc/ai-toolbelt/kubernetes
PKI="$ETC/pki"
KUBECONFIG_FILE="$ETC/admin.kubeconfig"
LIB=/var/lib/ai-toolbelt/kubernetes
RUN=/run/ai-toolbelt/kubernetes
LOGS=/var/log/ai-toolbelt/kubernetes
CACHE_DIR=/var/cache/ai-toolbelt/kubernetes
# Ports away from a real cluster's defaults, all on 127.0.0.1.
API_PORT=16443
ETCD_PORT=12379
ETCD_PEER_PORT=12380
CONTROLLER_MANAGER_PORT=20257
SCHEDULER_PORT=20259
KUBELET_PORT=20250
KUBELET_HEALTHZ_PORT=20248
# The kubelet refuses a loopback node IP unless the node's name is that IP: the API server then
# reaches the kubelet (logs, attach, exec) on 127.0.0.1.
NODE_NAME=127.0.0.1
SERVICE_RANGE=10.96.0.0/24
SERVICE_IP=10.96.0.1
# Addresses inside the pods' own network namespaces only (see cni-pod-veth.py); never routed.
POD_SUBNET=192.0.2.0/24

default_image="$(sed -n 's/^IMAGE="${AI_TOOLBELT_SANDBOX_IMAGE:-\([^}]*\)}"$/\1/p' "$here/setup-sandbox.sh" | head -n 1)"
IMAGE="${IMAGE:-${AI_TOOLBELT_SANDBOX_IMAGE:-$default_image}}"

# shellcheck source=scripts/kubernetes/build.sh
. "$here/kubernetes/build.sh"
# shellcheck source=scripts/kubernetes/pki.sh
. "$here/kubernetes/pki.sh"
# shellcheck source=scripts/kubernetes/processes.sh
. "$here/kubernetes/processes.sh"
# shellcheck source=scripts/kubernetes/configs.sh
. "$here/kubernetes/configs.sh"
# shellcheck source=scripts/kubernetes/cluster.sh
. "$here/kubernetes/cluster.sh"
# shellcheck source=scripts/kubernetes/agent-sandbox.sh
. "$here/kubernetes/agent-sandbox.sh"

if [ "$STOP" = 1 ]; then
  stop_cluster
  exit 0
fi
if [ "$RESTART_NODE" = 1 ]; then
  cluster_up || die "the cluster is not up (${WHY_DOWN:-down}); start it first"
  started=$SECONDS
  k8s_build
  restart_node
  log "the node is back in $((SECONDS - started)) s"
  exit 0
fi
if [ "$STATUS" = 1 ]; then
  if cluster_up; then
    log "up: kubectl --kubeconfig $KUBECONFIG_FILE (kubectl: $LIB/bin/kubectl)"
    if [ "$AGENT_SANDBOX" = 1 ]; then
      agent_sandbox_up || {
        log "agent-sandbox is not up"
        exit 1
      }
      log "agent-sandbox is up"
    fi
    exit 0
  fi
  log "down${WHY_DOWN:+ ($WHY_DOWN)}"
  exit 1
fi

started=$SECONDS
if [ "$BUILD_ONLY" = 1 ]; then
  k8s_build
  [ "$AGENT_SANDBOX" = 0 ] || agent_sandbox_build
  exit 0
fi
install_packages
k8s_build
if cluster_up; then
  log "the cluster is up (checked in $((SECONDS - started)) s); kubeconfig: $KUBECONFIG_FILE"
  [ "$AGENT_SANDBOX" = 0 ] || agent_sandbox_start
  exit 0
fi
if [ -d "$RUN" ] || [ -d "$LIB" ]; then
  log "the cluster is not up (${WHY_DOWN:-partly started}); stopping what is left first"
  stop_cluster
fi
start_cluster
[ "$AGENT_SANDBOX" = 0 ] || agent_sandbox_start
log "up in $((SECONDS - started)) s. kubeconfig: $KUBECONFIG_FILE"
echo "  export KUBECONFIG=$KUBECONFIG_FILE; $LIB/bin/kubectl get nodes"
