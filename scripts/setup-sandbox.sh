#!/usr/bin/env bash
# Prepares a Debian machine (root) for ai-toolbelt's sandbox: Docker + gVisor (runsc) + the image.
# Idempotent: every step checks first and does nothing when it is already done.
#
#   sudo bash scripts/setup-sandbox.sh
#
# Environment:
#   AI_TOOLBELT_SANDBOX_IMAGE  image name to produce (default ai-toolbelt/python:3.11)
#   AI_TOOLBELT_PULL_IMAGE     image to pull when a registry is reachable (default python:3.11-slim)
#   DOCKERD_LOG                dockerd's log file when this script starts it (default /var/log/dockerd.log)
set -euo pipefail

IMAGE="${AI_TOOLBELT_SANDBOX_IMAGE:-ai-toolbelt/python:3.11}"
PULL_IMAGE="${AI_TOOLBELT_PULL_IMAGE:-python:3.11-slim}"
DOCKERD_LOG="${DOCKERD_LOG:-/var/log/dockerd.log}"
DAEMON_JSON=/etc/docker/daemon.json
started=$(date +%s)

log() { echo "[setup-sandbox] $*"; }
die() {
  echo "[setup-sandbox] ERROR: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (sudo bash $0); on macOS use Docker Desktop instead (see docs/sandbox.md)"

# 1. Packages. Debian's docker.io brings dockerd + containerd; runsc is gVisor; mmdebstrap builds the
#    image offline when no registry is reachable.
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v runsc >/dev/null 2>&1 || missing+=(runsc)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # No systemd here: keep the packages' postinst from trying to start services.
  policy=/usr/sbin/policy-rc.d
  created_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ "$created_policy" = 1 ]; then rm -f "$policy"; fi
fi
RUNSC="$(command -v runsc)"

# 2. Register runsc. --network=none: the sandbox never has a network, and runsc refuses to start
#    with one in the root network namespace ("cannot run with network enabled ...").
mkdir -p /etc/docker
daemon_json_changed=$(
  python3 - "$DAEMON_JSON" "$RUNSC" <<'PY'
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
config = {}
if os.path.exists(path) and os.path.getsize(path) > 0:
    with open(path) as f:
        config = json.load(f)
wanted = {"path": runsc, "runtimeArgs": ["--network=none"]}
if config.get("runtimes", {}).get("runsc") == wanted:
    print("no")
else:
    config.setdefault("runtimes", {})["runsc"] = wanted
    with open(path + ".tmp", "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print("yes")
PY
)
if [ "$daemon_json_changed" = yes ]; then log "registered runsc in $DAEMON_JSON"; fi

# 3. dockerd. Containers never get a network, so no bridge and no iptables rules on the host.
if docker info >/dev/null 2>&1; then
  if [ "$daemon_json_changed" = yes ]; then
    log "reloading dockerd for the new runtime"
    kill -HUP "$(cat /var/run/docker.pid)" || die "could not signal dockerd; restart it to load the runsc runtime"
  fi
else
  # A dockerd that was killed (e.g. the previous CI job's) leaves its pid file behind, and a
  # new dockerd refuses to start while it exists.
  for pidfile in /var/run/docker.pid /var/run/docker/containerd/containerd.pid; do
    if [ -f "$pidfile" ] && ! kill -0 "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null; then
      rm -f "$pidfile"
    fi
  done
  log "starting dockerd (log: $DOCKERD_LOG)"
  setsid nohup dockerd --bridge=none --iptables=false --ip-masq=false >>"$DOCKERD_LOG" 2>&1 </dev/null &
  dockerd_pid=$!
fi
for _ in $(seq 1 120); do
  if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; then
    break
  fi
  if [ -n "${dockerd_pid:-}" ] && ! kill -0 "$dockerd_pid" 2>/dev/null; then
    tail -n 5 "$DOCKERD_LOG" >&2
    die "dockerd exited during start-up; see $DOCKERD_LOG"
  fi
  sleep 0.5
done
docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"' ||
  die "dockerd did not come up with the runsc runtime within 60 s; see $DOCKERD_LOG"
log "dockerd is up, runtimes: $(docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}')"

# 4. The image: python3 and coreutils' `timeout` (the container's TTL wrapper) are required.
image_ok() {
  docker image inspect "$IMAGE" >/dev/null 2>&1 &&
    docker run --rm --runtime=runsc --network=none --pids-limit=128 "$IMAGE" \
      sh -c 'command -v timeout >/dev/null && python3 -c "import sys; assert sys.version_info >= (3, 9)"'
}
if image_ok; then
  log "image $IMAGE is ready"
elif timeout 60 docker pull -q "$PULL_IMAGE" >/dev/null 2>&1; then
  docker tag "$PULL_IMAGE" "$IMAGE"
  log "pulled $PULL_IMAGE as $IMAGE"
else
  log "no registry reachable: building $IMAGE with mmdebstrap (Debian bookworm, python3)"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  mmdebstrap --quiet --variant=essential --include=python3-minimal,python3 --format=tar \
    bookworm "$tmp/rootfs.tar"
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["python3"]' \
    "$tmp/rootfs.tar" "$IMAGE" >/dev/null
  log "imported $IMAGE"
fi
image_ok || die "image $IMAGE lacks python3 or timeout, or does not run under runsc"

log "done in $(($(date +%s) - started)) s"
