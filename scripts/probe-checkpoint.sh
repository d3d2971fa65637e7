#!/usr/bin/env bash
# Measures whether gVisor checkpoint/restore works through the Docker engine on this machine
# (the question behind conversation interpreters' restore method). Root only. Starts a scratch
# engine with --experimental beside the host's (the image is copied into it), checkpoints and
# restores a counting process twice, prints one JSON line per attempt, and removes everything.
#   sudo bash scripts/probe-checkpoint.sh [IMAGE]
set -uo pipefail
IMAGE="${1:-${AI_TOOLBELT_SANDBOX_IMAGE:-ai-toolbelt/python:3.11-2}}"
NAME=ai-toolbelt-checkpoint-probe
SOCK="/var/run/$NAME.sock"
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 2; }
mkdir -p "/var/lib/$NAME" "/var/run/$NAME"
dockerd --experimental --data-root "/var/lib/$NAME" --exec-root "/var/run/$NAME" \
  --pidfile "/var/run/$NAME.pid" -H "unix://$SOCK" --bridge=none --iptables=false --ip-masq=false \
  >"/var/log/$NAME.log" 2>&1 &
DOCKERD=$!
cleanup() {
  docker -H "unix://$SOCK" rm -f probe >/dev/null 2>&1
  kill "$DOCKERD" 2>/dev/null
  wait "$DOCKERD" 2>/dev/null
  pkill -f "/var/run/$NAME/" 2>/dev/null
  rm -rf "/var/lib/$NAME" "/var/run/$NAME" "$SOCK"
}
trap cleanup EXIT
D=(docker -H "unix://$SOCK")
for _ in $(seq 100); do "${D[@]}" info >/dev/null 2>&1 && break; sleep 0.1; done
docker save "$IMAGE" | "${D[@]}" load >/dev/null
"${D[@]}" run -d --name probe --runtime runsc --network none --user 65534:65534 --read-only \
  --tmpfs /tmp:rw,size=32m "$IMAGE" python3 -c '
import time
n = 0
while True:
    n += 1
    print(n, flush=True)
    time.sleep(0.2)' >/dev/null
ms() { date +%s%3N; }
for round in 1 2; do
  sleep 1
  before=$("${D[@]}" logs probe 2>/dev/null | tail -1)
  t0=$(ms)
  created=$("${D[@]}" checkpoint create probe "c$round" 2>&1) && cok=true || cok=false
  t1=$(ms)
  restored=$("${D[@]}" start --checkpoint "c$round" probe 2>&1) && rok=true || rok=false
  t2=$(ms)
  sleep 0.5
  after=$("${D[@]}" logs probe 2>/dev/null | tail -1)
  # The counter goes on from where it was only if the process state came back.
  kept=false; [ "$rok" = true ] && [ -n "$after" ] && [ "${after:-0}" -gt "${before:-0}" ] && kept=true
  printf '{"probe":"checkpoint","round":%s,"checkpointOk":%s,"checkpointMs":%s,"restoreOk":%s,"restoreMs":%s,"stateKept":%s,"error":%s}\n' \
    "$round" "$cok" "$((t1 - t0))" "$rok" "$((t2 - t1))" "$kept" \
    "$(printf '%s' "$([ "$rok" = true ] && [ "$cok" = true ] || echo "$created $restored")" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().strip()[:300]))')"
done
