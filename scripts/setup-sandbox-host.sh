#!/usr/bin/env bash
# Turns a Debian machine (root) into a sandbox host that apps reach over the network: a dockerd
# with gVisor and the sandbox image, listening on TCP with mutual TLS (`--tlsverify`), next to the
# machine's own Docker engine. Apps (Next.js routes on a serverless platform, Hono replicas) get a
# client bundle (ca.pem, cert.pem, key.pem) and set DOCKER_HOST / DOCKER_TLS_VERIFY /
# DOCKER_CERT_PATH. See docs/deploy.md.
#
#   sudo bash scripts/setup-sandbox-host.sh --listen 10.0.0.5:2376
#   sudo bash scripts/setup-sandbox-host.sh --name docker2 --listen 127.0.0.1:2376 --skip-base  # a 2nd engine for tests
#   sudo bash scripts/setup-sandbox-host.sh --name docker2 --stop
#
# Idempotent: certificates are made once (the server certificate again when its addresses
# change), a running engine is left alone, the image is copied only when it differs, and a
# dockerd killed with -9 (stale pid files) is started again cleanly.
#
# Options:
#   --listen HOST:PORT  TCP address of the TLS listener (default 127.0.0.1:2376; 0.0.0.0:2376 for all)
#   --name NAME         engine instance; sets /var/lib/NAME, /var/run/NAME, /var/run/NAME.pid,
#                       unix:///var/run/NAME.sock and the certificate directory (default docker-sandbox)
#   --san LIST          extra subjectAltNames of the server cert, e.g. IP:10.0.0.5,DNS:sandbox.internal
#   --certs DIR         certificate directory (default /etc/ai-toolbelt/NAME; client bundle in DIR/client)
#   --skip-base         do not run scripts/setup-sandbox.sh (packages, runsc, image) first
#   --stop              stop this engine instance and exit
#
# Environment:
#   AI_TOOLBELT_SANDBOX_IMAGE  the image (default: the one setup-sandbox.sh builds)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
LISTEN=127.0.0.1:2376
NAME=docker-sandbox
EXTRA_SAN=
CERTS=
SKIP_BASE=0
STOP=0
while [ $# -gt 0 ]; do
  case "$1" in
  --listen) LISTEN="$2" && shift 2 ;;
  --name) NAME="$2" && shift 2 ;;
  --san) EXTRA_SAN="$2" && shift 2 ;;
  --certs) CERTS="$2" && shift 2 ;;
  --skip-base) SKIP_BASE=1 && shift ;;
  --stop) STOP=1 && shift ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' && exit 0 ;;
  *) echo "unknown option $1 (see --help)" >&2 && exit 2 ;;
  esac
done

log() { echo "[setup-sandbox-host:$NAME] $*"; }
die() {
  echo "[setup-sandbox-host:$NAME] ERROR: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (sudo bash $0)"
[[ "$NAME" =~ ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ ]] || die "--name must be a plain name, got '$NAME'"
[ "$NAME" != docker ] || die "--name docker would share the host engine's directories; pick another name"
[[ "$LISTEN" =~ ^(.+):([0-9]+)$ ]] || die "--listen must be HOST:PORT, got '$LISTEN'"
LISTEN_HOST="${BASH_REMATCH[1]}"
LISTEN_PORT="${BASH_REMATCH[2]}"

DATA_ROOT="/var/lib/$NAME"
EXEC_ROOT="/var/run/$NAME"
PIDFILE="/var/run/$NAME.pid"
SOCKET="/var/run/$NAME.sock"
LOGFILE="/var/log/$NAME.log"
CERTS="${CERTS:-/etc/ai-toolbelt/$NAME}"
LOCAL=(docker -H "unix://$SOCKET")

# The image setup-sandbox.sh builds by default (one place defines it; a test keeps the library's
# DEFAULT_SANDBOX_IMAGE equal to it).
default_image="$(sed -n 's/^IMAGE="${AI_TOOLBELT_SANDBOX_IMAGE:-\([^}]*\)}"$/\1/p' "$here/setup-sandbox.sh" | head -n 1)"
IMAGE="${AI_TOOLBELT_SANDBOX_IMAGE:-$default_image}"
[ -n "$IMAGE" ] || die "set AI_TOOLBELT_SANDBOX_IMAGE (no default found in $here/setup-sandbox.sh)"

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
engine_pid() { cat "$PIDFILE" 2>/dev/null || true; }
answers() { "${LOCAL[@]}" info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; }

remove_orphans() {
  # The shims and runsc sandboxes of a dockerd killed with -9 outlive it and its containerd;
  # the next containerd keeps them running, unknown to dockerd, for good. This engine's are
  # recognised by its exec root in their command line (by PID, never by a broad name).
  local orphans=() dir cmd
  for dir in /proc/[0-9]*; do
    cmd="$(tr '\0' ' ' 2>/dev/null <"$dir/cmdline" || true)"
    case "$cmd" in
    *"-address $EXEC_ROOT/containerd/containerd.sock"* | *"--root=$EXEC_ROOT/runtime-runc/"*)
      orphans+=("${dir#/proc/}")
      ;;
    esac
  done
  if [ "${#orphans[@]}" -gt 0 ]; then
    log "ending ${#orphans[@]} container processes left behind by the previous dockerd"
    kill -KILL "${orphans[@]}" 2>/dev/null || true
  fi
}
stop_engine() {
  local pid
  pid="$(engine_pid)"
  if alive "$pid"; then
    log "stopping dockerd (pid $pid)"
    kill -TERM "$pid"
    for _ in $(seq 1 60); do alive "$pid" || break && sleep 0.5; done
    if alive "$pid"; then kill -KILL "$pid" && log "dockerd did not stop in 30 s; killed it"; fi
  fi
  # dockerd stops the containerd it manages; one orphaned by a kill -9 of dockerd goes too.
  local cpid
  cpid="$(cat "$EXEC_ROOT/containerd/containerd.pid" 2>/dev/null || true)"
  if alive "$cpid"; then kill -TERM "$cpid" 2>/dev/null || true; fi
  for _ in $(seq 1 20); do alive "$cpid" || break && sleep 0.5; done
  rm -f "$PIDFILE"
  remove_orphans
}

if [ "$STOP" = 1 ]; then
  stop_engine
  log "stopped"
  exit 0
fi

# 1. Packages, runsc and the image on the host's own engine (the image is copied from it below).
if [ "$SKIP_BASE" = 0 ]; then
  AI_TOOLBELT_SANDBOX_IMAGE="$IMAGE" bash "$here/setup-sandbox.sh"
fi
command -v dockerd >/dev/null 2>&1 || die "dockerd is missing; run without --skip-base"
if ! command -v openssl >/dev/null 2>&1; then
  log "installing openssl"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssl >/dev/null ||
    die "openssl is missing and could not be installed (apt-get install openssl)"
fi

# 2. Certificates: a CA, a server certificate for the listen address, one client bundle.
#    EC P-256 keys: fast to make, and accepted by Docker's Go TLS and Node.
umask 077
mkdir -p "$CERTS/client"
san="DNS:localhost,IP:127.0.0.1"
if [[ "$LISTEN_HOST" =~ ^[0-9.]+$ ]]; then
  [ "$LISTEN_HOST" = 0.0.0.0 ] || [ "$LISTEN_HOST" = 127.0.0.1 ] || san="$san,IP:$LISTEN_HOST"
else
  san="$san,DNS:$LISTEN_HOST"
fi
[ -z "$EXTRA_SAN" ] || san="$san,$EXTRA_SAN"
newkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
sign() { # sign CSR OUT EXTFILE
  openssl x509 -req -days 825 -sha256 -in "$1" -CA "$CERTS/ca.pem" -CAkey "$CERTS/ca-key.pem" \
    -CAcreateserial -out "$2" -extfile "$3" 2>/dev/null
}
certs_changed=0
if [ ! -s "$CERTS/ca.pem" ] || [ ! -s "$CERTS/ca-key.pem" ]; then
  log "making a CA in $CERTS"
  newkey "$CERTS/ca-key.pem"
  openssl req -x509 -new -key "$CERTS/ca-key.pem" -sha256 -days 3650 \
    -subj "/CN=ai-toolbelt sandbox CA ($NAME@$(hostname))" -out "$CERTS/ca.pem"
  rm -f "$CERTS/server-cert.pem" "$CERTS/client/cert.pem"
fi
if [ ! -s "$CERTS/server-cert.pem" ] || [ "$(cat "$CERTS/server-san" 2>/dev/null)" != "$san" ]; then
  log "making the server certificate for $san"
  newkey "$CERTS/server-key.pem"
  openssl req -new -key "$CERTS/server-key.pem" -subj "/CN=$LISTEN_HOST" -out "$CERTS/server.csr"
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" >"$CERTS/server-ext.cnf"
  sign "$CERTS/server.csr" "$CERTS/server-cert.pem" "$CERTS/server-ext.cnf"
  echo "$san" >"$CERTS/server-san"
  rm -f "$CERTS/server.csr"
  certs_changed=1
fi
if [ ! -s "$CERTS/client/cert.pem" ]; then
  log "making the client bundle in $CERTS/client"
  newkey "$CERTS/client/key.pem"
  openssl req -new -key "$CERTS/client/key.pem" -subj "/CN=ai-toolbelt app" -out "$CERTS/client.csr"
  printf 'extendedKeyUsage=clientAuth\n' >"$CERTS/client-ext.cnf"
  sign "$CERTS/client.csr" "$CERTS/client/cert.pem" "$CERTS/client-ext.cnf"
  rm -f "$CERTS/client.csr"
fi
cp "$CERTS/ca.pem" "$CERTS/client/ca.pem"
umask 022

# 3. The engine's own config: the host's runtimes (runsc, and runsc-egress for containers allowed
#    the network through the egress proxy) without anything else of the host's daemon.json
#    (hosts, data-root...), which would clash with this instance's flags.
config_changed=$(
  python3 - /etc/docker/daemon.json "$CERTS/daemon.json" <<'PY'
import json, os, sys
source, target = sys.argv[1], sys.argv[2]
runtimes = {}
if os.path.exists(source) and os.path.getsize(source) > 0:
    runtimes = json.load(open(source)).get("runtimes", {})
for name in ("runsc", "runsc-egress"):
    if name not in runtimes:
        sys.exit(f"{name} is not registered in /etc/docker/daemon.json; run without --skip-base")
config = {"runtimes": runtimes}
try:
    with open(target) as f:
        unchanged = json.load(f) == config
except (OSError, ValueError):
    unchanged = False
with open(target + ".tmp", "w") as f:
    json.dump(config, f, indent=2)
os.replace(target + ".tmp", target)
print("no" if unchanged else "yes")
PY
)

# 4. dockerd. No bridge and no iptables: sandbox containers never get a network.
DOCKERD=(dockerd --config-file "$CERTS/daemon.json"
  --data-root "$DATA_ROOT" --exec-root "$EXEC_ROOT" --pidfile "$PIDFILE"
  -H "unix://$SOCKET" -H "tcp://$LISTEN"
  --tlsverify --tlscacert "$CERTS/ca.pem" --tlscert "$CERTS/server-cert.pem" --tlskey "$CERTS/server-key.pem"
  --bridge=none --iptables=false --ip6tables=false --ip-masq=false)
# A running engine started with other flags (address, certificate) is restarted with these.
if answers && { [ "$certs_changed" = 1 ] || [ "$(cat "$CERTS/dockerd.args" 2>/dev/null)" != "${DOCKERD[*]}" ]; }; then
  log "restarting dockerd for the new address or certificate"
  stop_engine
fi
start_engine() {
  # A dockerd (or its containerd) killed with -9 leaves pid files; a new dockerd refuses to
  # start while its own exists.
  for pidfile in "$PIDFILE" "$EXEC_ROOT/containerd/containerd.pid"; do
    if [ -f "$pidfile" ] && ! alive "$(cat "$pidfile" 2>/dev/null)"; then rm -f "$pidfile"; fi
  done
  alive "$(cat "$EXEC_ROOT/containerd/containerd.pid" 2>/dev/null)" || remove_orphans
  mkdir -p "$DATA_ROOT" "$EXEC_ROOT"
  log "starting dockerd (log: $LOGFILE)"
  echo "${DOCKERD[*]}" >"$CERTS/dockerd.args"
  setsid nohup "${DOCKERD[@]}" >>"$LOGFILE" 2>&1 </dev/null &
  dockerd_pid=$!
  for _ in $(seq 1 120); do
    answers && return 0
    alive "$dockerd_pid" || return 1
    sleep 0.5
  done
  return 1
}
if ! answers; then
  pid="$(engine_pid)"
  if alive "$pid"; then
    # Alive but not answering (still starting, or hung): give it a moment, then replace it.
    for _ in $(seq 1 40); do answers && break || sleep 0.5; done
    answers || stop_engine
  fi
fi
# A running engine reloads its runtimes on SIGHUP (its containers keep running).
if answers && [ "$config_changed" = yes ]; then
  log "reloading dockerd for the new runtimes"
  kill -HUP "$(engine_pid)" || die "could not signal dockerd; stop it (--stop) and run again"
  for _ in $(seq 1 20); do
    "${LOCAL[@]}" info --format '{{json .Runtimes}}' 2>/dev/null | grep -q -- '"--host-uds=open"' && break || sleep 0.5
  done
fi
if ! answers; then
  # After a kill -9 the orphaned containerd can make the first start time out; one retry.
  start_engine || {
    log "dockerd did not come up; retrying once"
    stop_engine
    start_engine
  } || {
    tail -n 15 "$LOGFILE" >&2
    die "dockerd did not come up with the runsc runtime; see $LOGFILE"
  }
fi
log "dockerd is up (pid $(engine_pid)) on unix://$SOCKET and tcp://$LISTEN (mutual TLS)"

# 5. The image, copied from the host's engine when this engine lacks it or has an older one.
host_id="$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null)" ||
  die "the host engine has no image $IMAGE; run without --skip-base"
if [ "$("${LOCAL[@]}" image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)" != "$host_id" ]; then
  log "loading $IMAGE (docker save | docker -H unix://$SOCKET load)"
  docker save "$IMAGE" | "${LOCAL[@]}" load -q >/dev/null
fi
"${LOCAL[@]}" run --rm --runtime=runsc --network=none --pids-limit=128 "$IMAGE" \
  sh -c 'command -v timeout >/dev/null && python3 -c "pass"' ||
  die "the image does not run under runsc on this engine; see $LOGFILE"

# 6. The TLS listener refuses clients without the bundle and accepts the bundle.
check_host="$LISTEN_HOST"
[ "$check_host" != 0.0.0.0 ] || check_host=127.0.0.1
TLS=(docker -H "tcp://$check_host:$LISTEN_PORT" --tlsverify --tlscacert "$CERTS/client/ca.pem"
  --tlscert "$CERTS/client/cert.pem" --tlskey "$CERTS/client/key.pem")
"${TLS[@]}" version --format '{{.Server.Version}}' >/dev/null || die "the TLS listener does not accept the client bundle"
if docker -H "tcp://$check_host:$LISTEN_PORT" --tlsverify --tlscacert "$CERTS/client/ca.pem" version >/dev/null 2>&1; then
  die "the TLS listener accepts clients without a certificate"
fi

log "ready. Copy $CERTS/client (ca.pem, cert.pem, key.pem) to the app and set:"
echo "  DOCKER_HOST=tcp://$LISTEN_HOST:$LISTEN_PORT DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=/path/to/client"
