# shellcheck shell=bash
# Sourced by scripts/setup-kubernetes.sh: starting, finding and stopping the cluster's processes,
# and removing every mount and cgroup they made.
#
# Needs: log, die, RUN, LIB, LOGS. Pid files live in $RUN/pids/NAME.pid.

# A live process whose command line contains $2: not a zombie, and not an unrelated process that
# reused the PID.
alive() {
  local pid="${1:-}" state
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  state="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)"
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2"
}
pid_of() { cat "$RUN/pids/$1.pid" 2>/dev/null || true; }
# The component NAME runs (its pid file names a live process of its binary).
running() { alive "$(pid_of "$1")" "$2"; }

# start_process NAME COMMAND...: in its own session, output to $LOGS/NAME.log, pid in $RUN/pids.
start_process() {
  local name="$1"
  shift
  mkdir -p "$RUN/pids" "$LOGS"
  echo "--- $(date -Is) starting: $*" >>"$LOGS/$name.log"
  setsid nohup "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/pids/$name.pid"
}

# wait_for WHAT SECONDS NAME CHECK...: runs CHECK every half second until it succeeds, the
# component NAME (when not empty) dies, or SECONDS pass.
wait_for() {
  local what="$1" seconds="$2" name="$3" deadline
  shift 3
  deadline=$((SECONDS + seconds))
  while [ "$SECONDS" -lt "$deadline" ]; do
    "$@" >/dev/null 2>&1 && return 0
    if [ -n "$name" ] && ! alive "$(pid_of "$name")" ""; then
      tail -n 20 "$LOGS/$name.log" >&2 || true
      die "$name exited while waiting for $what; see $LOGS/$name.log"
    fi
    sleep 0.5
  done
  "$@" >/dev/null 2>&1 && return 0
  [ -z "$name" ] || tail -n 20 "$LOGS/$name.log" >&2 || true
  die "$what did not happen within $seconds s${name:+; see $LOGS/$name.log}"
}

# Waits up to $2 half-seconds for process $1 to be gone.
gone_within() {
  for _ in $(seq 1 "$2"); do alive "$1" "" || return 0 && sleep 0.5; done
  ! alive "$1" ""
}

stop_process() {
  local name="$1" pid
  pid="$(pid_of "$name")"
  if alive "$pid" ""; then
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    gone_within "$pid" 40 || {
      log "$name did not stop in 20 s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      gone_within "$pid" 20 || true
    }
  fi
  rm -f "$RUN/pids/$name.pid"
}

# The cluster's processes that no pid file names: containerd's shims, runsc sandboxes and gofers,
# and a component whose pid file was lost. A process counts when its executable is one of the
# cluster's programs and its command line names one of the cluster's directories (never by a
# broad name; a shell or editor that merely mentions a path is not one).
own_processes() {
  local dir exe cmd
  for dir in /proc/[0-9]*; do
    exe="$(readlink "$dir/exe" 2>/dev/null)" || continue
    case "${exe##*/}" in
    containerd | containerd\ * | containerd-shim-runc-v2* | runsc* | etcd* | kube-* | kubelet* | agent-sandbox-controller*) ;;
    *) continue ;;
    esac
    cmd="$(tr '\0' ' ' 2>/dev/null <"$dir/cmdline" || true)"
    case "$cmd" in
    *"$RUN/"* | *"$LIB/"* | *"$ETC/"* | *"$CACHE_DIR/"*) echo "${dir#/proc/}" ;;
    esac
  done
}

kill_own_processes() {
  local pids
  pids="$(own_processes | xargs)"
  [ -z "$pids" ] && return 0
  log "ending $(echo "$pids" | wc -w) leftover processes (shims, gVisor sandboxes)"
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
  for _ in $(seq 1 40); do
    [ -z "$(own_processes)" ] && return 0
    sleep 0.25
  done
  die "processes of the cluster survived SIGKILL: $(own_processes | xargs)"
}

# Every mount point under the cluster's directories (overlays, tmpfs, netns and bind mounts),
# deepest first.
own_mounts() {
  awk '{print $5}' /proc/self/mountinfo | sed 's/\\040/ /g' |
    grep -E "^($LIB|$RUN)(/|$)" | awk '{print length, $0}' | sort -rn | cut -d' ' -f2- || true
}

unmount_all() {
  local mounts target
  for _ in 1 2 3; do
    mounts="$(own_mounts)"
    [ -z "$mounts" ] && return 0
    while IFS= read -r target; do
      umount "$target" 2>/dev/null || umount -l "$target" 2>/dev/null || true
    done <<<"$mounts"
  done
  [ -z "$(own_mounts)" ] || die "could not unmount: $(own_mounts | xargs)"
}

# The cgroup the kubelet makes (kubepods, with its QoS classes and pods) in every hierarchy.
# Only ever one this script found absent before it started the kubelet (see preflight).
remove_cgroups() {
  local dir left=()
  for dir in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [ -d "$dir" ] || continue
    # Children first; a cgroup directory is removed with rmdir, never rm.
    find "$dir" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    [ -d "$dir" ] && left+=("$dir")
  done
  [ "${#left[@]}" -eq 0 ] || die "could not remove the cgroups ${left[*]} (still has processes?)"
}
