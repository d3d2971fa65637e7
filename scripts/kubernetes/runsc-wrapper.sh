#!/usr/bin/env bash
# The OCI runtime behind the local cluster's `runsc` handler: containerd's runc v2 shim calls it as
# it would call runc (BinaryName). It runs Debian's runsc with --network=none and smooths two
# differences between runsc and runc that the shim trips over (docs: DESIGN.md, Kubernetes):
#  - create: runsc reads the CRI annotations io.kubernetes.cri.container-type and
#    io.kubernetes.cri.sandbox-id and joins an app container to the pause container's sandbox,
#    then reports the sandbox's PID: the shim never sees the app exit and the pod never ends.
#    Without them each container gets a gVisor sandbox of its own, as under dockerd.
#  - kill: runsc says "sandbox is not running" where runc says "container not running"; the shim
#    only knows the latter and would retry the exit forever.
# setup-kubernetes.sh installs a copy with RUNSC set to the runsc it found.
set -uo pipefail
RUNSC="${AI_TOOLBELT_RUNSC:-/usr/bin/runsc}"

# The subcommand: the first word after the global flags (the shim passes --root DIR, --log FILE,
# --log-format FMT as separate words, and boolean flags alone).
command=""
bundle="$PWD"
i=1
while [ "$i" -le "$#" ]; do
  word="${!i}"
  if [ -z "$command" ]; then
    case "$word" in
    --root | --log | --log-format) i=$((i + 1)) ;;
    -*) ;;
    *) command="$word" ;;
    esac
  else
    case "$word" in
    --bundle | -b) next=$((i + 1)) && bundle="${!next}" ;;
    --bundle=*) bundle="${word#--bundle=}" ;;
    esac
  fi
  i=$((i + 1))
done

case "$command" in
create)
  python3 - "$bundle/config.json" <<'PY' || exit 1
import json, os, sys
path = sys.argv[1]
with open(path) as f:
    spec = json.load(f)
annotations = spec.get("annotations") or {}
dropped = [annotations.pop(k, None) for k in ("io.kubernetes.cri.container-type", "io.kubernetes.cri.sandbox-id")]
if any(v is not None for v in dropped):
    with open(path + ".tmp", "w") as f:
        json.dump(spec, f)
    os.replace(path + ".tmp", path)
PY
  exec "$RUNSC" --network=none "$@"
  ;;
kill)
  errors="$(mktemp)"
  "$RUNSC" --network=none "$@" 2>"$errors"
  status=$?
  err="$(cat "$errors")"
  rm -f "$errors"
  if [ "$status" -ne 0 ]; then
    case "$err" in
    *"sandbox is not running"*) err="container not running (runsc: $err)" ;;
    esac
    echo "$err" >&2
  fi
  exit "$status"
  ;;
*)
  exec "$RUNSC" --network=none "$@"
  ;;
esac
