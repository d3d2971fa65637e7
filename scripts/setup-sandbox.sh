#!/usr/bin/env bash
# Prepares a Debian machine (root) for ai-toolbelt's sandbox: Docker + gVisor (runsc) + the image.
# Idempotent: every step checks first and does nothing when it is already done.
#
#   sudo bash scripts/setup-sandbox.sh
#   sudo bash scripts/setup-sandbox.sh --name docker-test --engine-only   # a scratch engine (tests)
#   sudo bash scripts/setup-sandbox.sh --name docker-test --stop
#
# A dockerd that was killed (kill -9: stale pid files, a dying process, an orphaned containerd)
# is started again in the same run.
#
# Options:
#   --add-packages "..."  Debian packages to add to the image
#   --add-python "..."    Python packages to add on top of it, each pinned as NAME==VERSION with
#                         every dependency the image lacks listed too (installed with --no-deps);
#                         wheels only, from the package index, checked against the sha256 the
#                         index gives; the image's tag then ends in a hash of the list
#   --index-url URL       the package index for --add-python (default: pip's own configuration)
#   --image NAME          image name to produce
#   --name NAME           engine instance (default: the host's engine, /var/run/docker.sock);
#                         another name uses /var/lib/NAME, /var/run/NAME, /var/run/NAME.pid and
#                         unix:///var/run/NAME.sock
#   --engine-only         stop once the engine answers (no image)
#   --stop                stop the engine instance and exit
#
# Environment:
#   AI_TOOLBELT_SANDBOX_IMAGE  image name to produce (default ai-toolbelt/python:3.11-2: Python 3.11,
#                              image revision 2; the tag changes whenever the package list does)
#   AI_TOOLBELT_EXTRA_PACKAGES Debian packages to add to the image, space separated (e.g.
#                              "python3-sklearn python3-seaborn"); or pass --add-packages "..."
#   AI_TOOLBELT_PYTHON_PACKAGES Python packages to add (NAME==VERSION ...); or pass --add-python "..."
#   AI_TOOLBELT_PYTHON_INDEX   the package index for them; or pass --index-url URL
#   DOCKERD_LOG                dockerd's log file when this script starts it (default /var/log/dockerd.log)
set -euo pipefail

IMAGE="${AI_TOOLBELT_SANDBOX_IMAGE:-ai-toolbelt/python:3.11-2}"
EXTRA_PACKAGES="${AI_TOOLBELT_EXTRA_PACKAGES:-}"
PYTHON_PACKAGES="${AI_TOOLBELT_PYTHON_PACKAGES:-}"
PYTHON_INDEX="${AI_TOOLBELT_PYTHON_INDEX:-}"
NAME=docker
ENGINE_ONLY=0
STOP=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --add-packages) EXTRA_PACKAGES="$EXTRA_PACKAGES ${2:?--add-packages needs a list}" && shift 2 ;;
    --add-python) PYTHON_PACKAGES="$PYTHON_PACKAGES ${2:?--add-python needs a list}" && shift 2 ;;
    --index-url) PYTHON_INDEX="${2:?--index-url needs a URL}" && shift 2 ;;
    --image) IMAGE="${2:?--image needs a name}" && shift 2 ;;
    --name) NAME="${2:?--name needs a name}" && shift 2 ;;
    --engine-only) ENGINE_ONLY=1 && shift ;;
    --stop) STOP=1 && shift ;;
    *) echo "[setup-sandbox] ERROR: unknown argument $1 (known: --add-packages \"pkg ...\", --add-python \"name==version ...\", --index-url URL, --image NAME, --name NAME, --engine-only, --stop)" >&2 && exit 2 ;;
  esac
done
DOCKERD_LOG="${DOCKERD_LOG:-/var/log/dockerd.log}"
DAEMON_JSON=/etc/docker/daemon.json
started=$(date +%s)

log() { echo "[setup-sandbox] $*"; }
die() {
  echo "[setup-sandbox] ERROR: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || die "run as root (sudo bash $0); on macOS use Docker Desktop instead (see docs/sandbox.md)"
[[ "$NAME" =~ ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ ]] || die "--name must be a plain name, got '$NAME'"

# The engine instance: the host's own (default paths) or a named one beside it.
if [ "$NAME" = docker ]; then
  PIDFILE=/var/run/docker.pid
  EXEC_ROOT=/var/run/docker
  DOCKER=(docker)
  DOCKERD_ARGS=()
else
  PIDFILE="/var/run/$NAME.pid"
  EXEC_ROOT="/var/run/$NAME"
  DOCKER=(docker -H "unix:///var/run/$NAME.sock")
  DOCKERD_ARGS=(--data-root "/var/lib/$NAME" --exec-root "$EXEC_ROOT" --pidfile "$PIDFILE" -H "unix:///var/run/$NAME.sock")
  [ "$DOCKERD_LOG" != /var/log/dockerd.log ] || DOCKERD_LOG="/var/log/$NAME.log"
fi
CONTAINERD_PIDFILE="$EXEC_ROOT/containerd/containerd.pid"

# A live process running $2: not a zombie (a killed dockerd whose parent has not reaped it
# still answers kill -0), and not an unrelated process that reused the PID.
alive() {
  local pid="${1:-}" state
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  state="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)"
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2"
}
pid_of() { cat "$1" 2>/dev/null || true; }
answers() { "${DOCKER[@]}" info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; }
# Waits up to $2 half-seconds for process $1 to be gone.
gone_within() {
  for _ in $(seq 1 "$2"); do alive "$1" "" || return 0 && sleep 0.5; done
  ! alive "$1" ""
}
stop_engine() {
  local pid cpid
  pid="$(pid_of "$PIDFILE")"
  if alive "$pid" dockerd; then
    log "stopping dockerd (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    gone_within "$pid" 60 || kill -KILL "$pid" 2>/dev/null || true
    gone_within "$pid" 20 || true
  fi
  # dockerd stops the containerd it manages; one orphaned by a kill -9 of dockerd goes too.
  cpid="$(pid_of "$CONTAINERD_PIDFILE")"
  if alive "$cpid" containerd; then
    kill -TERM "$cpid" 2>/dev/null || true
    gone_within "$cpid" 20 || kill -KILL "$cpid" 2>/dev/null || true
    gone_within "$cpid" 10 || true
  fi
  rm -f "$PIDFILE" "$CONTAINERD_PIDFILE"
}
if [ "$STOP" = 1 ]; then
  [ "$NAME" != docker ] || die "--stop is for named instances only; the host's engine is left alone"
  stop_engine
  log "stopped $NAME"
  exit 0
fi

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
#    A second runtime, runsc-egress, is the same plus --host-uds=open: a host Unix socket
#    bind-mounted into the container becomes reachable (plain runsc refuses it, EPERM). That is
#    how a container allowed to use the network reaches the egress proxy's socket; nothing else
#    is mounted, and its network stays none.
mkdir -p /etc/docker
daemon_json_changed=$(
  python3 - "$DAEMON_JSON" "$RUNSC" <<'PY'
import json, os, sys
path, runsc = sys.argv[1], sys.argv[2]
config = {}
if os.path.exists(path) and os.path.getsize(path) > 0:
    with open(path) as f:
        config = json.load(f)
wanted = {
    "runsc": {"path": runsc, "runtimeArgs": ["--network=none"]},
    "runsc-egress": {"path": runsc, "runtimeArgs": ["--network=none", "--host-uds=open"]},
}
runtimes = config.get("runtimes", {})
if all(runtimes.get(name) == runtime for name, runtime in wanted.items()):
    print("no")
else:
    config.setdefault("runtimes", {}).update(wanted)
    with open(path + ".tmp", "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print("yes")
PY
)
if [ "$daemon_json_changed" = yes ]; then log "registered runsc and runsc-egress in $DAEMON_JSON"; fi

# 3. dockerd. Containers never get a network, so no bridge and no iptables rules on the host.
#    After a kill -9 the old dockerd may still be dying (its pid file points at a live or zombie
#    process: a new dockerd refuses to start, "pid file found"), and its containerd may live on
#    as an orphan that makes the next start time out. Both are waited for or ended first.
start_engine() {
  local pid cpid
  pid="$(pid_of "$PIDFILE")"
  if alive "$pid" dockerd; then
    # Alive but not answering: still starting, dying, or hung. Give it a moment, then replace it.
    for _ in $(seq 1 40); do
      answers && return 0
      alive "$pid" dockerd || break
      sleep 0.5
    done
    answers && return 0
    alive "$pid" dockerd && stop_engine
  fi
  [ -f "$PIDFILE" ] && ! alive "$(pid_of "$PIDFILE")" dockerd && rm -f "$PIDFILE"
  cpid="$(pid_of "$CONTAINERD_PIDFILE")"
  if alive "$cpid" containerd; then
    log "ending containerd $cpid left behind by the previous dockerd"
    kill -TERM "$cpid" 2>/dev/null || true
    gone_within "$cpid" 20 || kill -KILL "$cpid" 2>/dev/null || true
    gone_within "$cpid" 10 || true
  fi
  rm -f "$CONTAINERD_PIDFILE"
  log "starting dockerd (log: $DOCKERD_LOG)"
  setsid nohup dockerd "${DOCKERD_ARGS[@]}" --bridge=none --iptables=false --ip-masq=false >>"$DOCKERD_LOG" 2>&1 </dev/null &
  local started_pid=$!
  # Wait for the socket to answer with the runsc runtime.
  for _ in $(seq 1 120); do
    answers && return 0
    alive "$started_pid" dockerd || return 1
    sleep 0.5
  done
  return 1
}
if answers; then
  if [ "$daemon_json_changed" = yes ]; then
    log "reloading dockerd for the new runtimes"
    kill -HUP "$(pid_of "$PIDFILE")" || die "could not signal dockerd; restart it to load the runsc runtimes"
    # answers() already held before the signal: wait for the reload itself.
    for _ in $(seq 1 20); do
      "${DOCKER[@]}" info --format '{{json .Runtimes}}' 2>/dev/null | grep -q -- '"--host-uds=open"' && break || sleep 0.5
    done
  fi
else
  start_engine || {
    log "dockerd did not come up; stopping what is left and retrying once"
    tail -n 5 "$DOCKERD_LOG" >&2 || true
    stop_engine
    start_engine
  } || {
    tail -n 15 "$DOCKERD_LOG" >&2 || true
    die "dockerd did not come up with the runsc runtime within 60 s; see $DOCKERD_LOG"
  }
fi
answers || die "dockerd does not answer with the runsc runtime; see $DOCKERD_LOG"
log "dockerd is up, runtimes: $("${DOCKER[@]}" info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}')"
if [ "$ENGINE_ONLY" = 1 ]; then
  log "done in $(($(date +%s) - started)) s (engine only)"
  exit 0
fi

# 4. The image: Debian bookworm's python3 with the data stack a code interpreter is expected to have
#    (numpy, pandas, matplotlib, scipy, Pillow, sympy), from Debian packages, built offline with
#    mmdebstrap (Debian's mirrors are reachable where Docker Hub and PyPI are not).
#    - pip, for the `pip install` of containers allowed the network (through the egress proxy),
#      and ca-certificates, so pip verifies TLS to an https index.
#    - No recommends, docs, man pages or locales; the packages' test suites are deleted.
#    - Debian's scipy depends on pythran (a compiler: g++, libpython3-dev, BLAS headers) and Pillow
#      on Tk; none of it is needed to run code, so everything outside the runtime closure of the
#      listed packages is purged (about 660 MiB).
#    - matplotlib's font cache is built once here: building it costs ~1 s under gVisor on every
#      fresh interpreter; the bootstrap copies it into the writable config dir.
#    - Labels say what is inside: ai-toolbelt.packages (read by DockerSandbox and told to the model)
#      and ai-toolbelt.image.spec (a rebuild happens when the requested package list changes).
BASE_PACKAGES="python3-minimal python3 python3-numpy python3-pandas python3-matplotlib python3-scipy python3-pil python3-sympy python3-pip ca-certificates"
# Needed only to build or by optional extras (pythran: scipy's build-time compiler; imagetk/tk: GUI;
# lxml/unicode-data: optional for fontTools; perl/usrmerge: maintainer scripts).
NOT_AT_RUNTIME="python3-pythran python3-pil.imagetk python3-tk libopenblas-dev libopenblas-pthread-dev libopenblas0 libopenblas0-pthread python3-lxml unicode-data usrmerge perl"
EXTRA_PACKAGES="$(echo "$EXTRA_PACKAGES" | xargs -n1 2>/dev/null | sort -u | xargs)"
SPEC="revision=2 packages=$BASE_PACKAGES extra=$EXTRA_PACKAGES"
SPEC_HASH="$(printf '%s' "$SPEC" | sha256sum | cut -c1-16)"

# shellcheck source=scripts/sandbox-image-lib.sh
. "$(dirname "$0")/sandbox-image-lib.sh"

image_ok() {
  [ "$("${DOCKER[@]}" image inspect -f '{{index .Config.Labels "ai-toolbelt.image.spec"}}' "$IMAGE" 2>/dev/null)" = "$SPEC_HASH" ] &&
    "${DOCKER[@]}" run --rm --runtime=runsc --network=none --pids-limit=128 --read-only --user 65534:65534 \
      --tmpfs /tmp -e MPLCONFIGDIR=/tmp \
      "$IMAGE" sh -c 'command -v timeout >/dev/null && python3 -c "import sys, numpy, pandas, matplotlib, scipy, PIL, sympy; assert sys.version_info >= (3, 9)" && python3 -m pip --version >/dev/null'
}

if image_ok; then
  log "image $IMAGE is ready"
else
  log "building $IMAGE with mmdebstrap (Debian bookworm: python3 + data stack${EXTRA_PACKAGES:+ + $EXTRA_PACKAGES}); about 3 minutes"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  include="$(echo "$BASE_PACKAGES $EXTRA_PACKAGES" | xargs | tr ' ' ',')"
  mmdebstrap --quiet --variant=essential --include="$include" \
    --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --format=directory bookworm "$tmp/root" ||
    die "mmdebstrap failed (are Debian's mirrors reachable? is every package in --add-packages a bookworm package?)"
  # Purge what no listed package needs at run time (explicitly requested extras are always kept).
  purge="$(
    python3 - "$tmp/root" "$NOT_AT_RUNTIME" "$BASE_PACKAGES $EXTRA_PACKAGES" "$EXTRA_PACKAGES" <<'PY'
import subprocess, sys
root, skip, wanted, extras = sys.argv[1], set(sys.argv[2].split()), sys.argv[3].split(), set(sys.argv[4].split())
skip -= extras
fmt = '${Package}\t${Essential}\t${Priority}\t${Pre-Depends}, ${Depends}\t${Provides}\n'
out = subprocess.run(['chroot', root, 'dpkg-query', '-W', '-f=' + fmt], capture_output=True, text=True, check=True).stdout
deps, provides, required = {}, {}, []
for line in out.splitlines():
    name, essential, priority, depends, provided = line.split('\t')
    deps[name] = depends
    if essential == 'yes' or priority == 'required':
        required.append(name)
    for p in provided.split(','):
        p = p.strip().split(' ')[0]
        if p:
            provides.setdefault(p, []).append(name)
def resolve(alternatives):
    for alternative in alternatives.split('|'):
        name = alternative.strip().split(' ')[0].split(':')[0]
        if name in deps:
            return name
        if name in provides:
            return provides[name][0]
keep, stack = set(), [n for n in required + wanted + ['libblas3', 'liblapack3'] if n in deps]
while stack:
    name = stack.pop()
    if name in keep or (name in skip and name not in wanted):
        continue
    keep.add(name)
    stack.extend(d for d in (resolve(a) for a in deps[name].split(',') if a.strip()) if d and d not in keep)
print(' '.join(sorted(set(deps) - keep)))
PY
  )"
  if [ -n "$purge" ]; then
    chroot "$tmp/root" dpkg --purge --force-depends,remove-essential $purge >/dev/null 2>&1 ||
      die "could not purge build-only packages from the image"
  fi
  find "$tmp/root/usr/lib/python3/dist-packages" -type d -name tests -prune -exec rm -rf {} +
  rm -rf "$tmp/root/var/cache/apt" "$tmp/root/var/lib/apt/lists" "$tmp/root/var/log"/*
  # matplotlib's font list, built once (its paths are this image's own).
  mkdir -p "$tmp/root/usr/share/ai-toolbelt/matplotlib"
  chroot "$tmp/root" env MPLCONFIGDIR=/usr/share/ai-toolbelt/matplotlib MPLBACKEND=Agg \
    python3 -c 'import matplotlib.font_manager' || die "matplotlib does not import in the new image"
  packages="$(list_packages "$tmp/root")"
  tar -C "$tmp/root" -c . | "${DOCKER[@]}" import "${IMAGE_CONFIG[@]}" \
    --change "LABEL ai-toolbelt.image.spec=$SPEC_HASH" \
    --change "LABEL ai-toolbelt.packages=$packages" \
    - "$IMAGE" >/dev/null
  rm -rf "$tmp"
  trap - EXIT
  log "imported $IMAGE ($(($("${DOCKER[@]}" image inspect -f '{{.Size}}' "$IMAGE") / 1024 / 1024)) MiB)"
fi
image_ok || die "image $IMAGE lacks python3, timeout, the data stack or pip, or does not run under runsc"

# 5. Python packages on top (--add-python), as a second image whose tag ends in a hash of the list:
#    pinned wheels only (nothing is compiled here), every one checked against the sha256 its index
#    gives, installed with --no-deps into /usr/local (the pins must name every dependency the
#    Debian data stack lacks). See scripts/add-python-packages.sh.
PYTHON_PACKAGES="$(echo "$PYTHON_PACKAGES" | xargs -n1 2>/dev/null | sort -u | xargs)"
if [ -n "$PYTHON_PACKAGES" ]; then
  BASE_IMAGE="$IMAGE"
  IMAGE="$(
    DOCKER_CMD="${DOCKER[*]}" IMAGE_SPEC="$SPEC_HASH" \
      bash "$(dirname "$0")/add-python-packages.sh" "$BASE_IMAGE" "$PYTHON_INDEX" $PYTHON_PACKAGES
  )" || die "could not add the Python packages $PYTHON_PACKAGES"
  log "image $IMAGE is ready (on $BASE_IMAGE): use it with DockerSandbox({ image: '$IMAGE' }) or AI_TOOLBELT_SANDBOX_IMAGE=$IMAGE"
fi

log "done in $(($(date +%s) - started)) s"
