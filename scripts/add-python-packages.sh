#!/usr/bin/env bash
# Adds pinned Python packages to a sandbox image, as a new image; prints its name (only that, on
# stdout). Called by setup-sandbox.sh for --add-python; root (it chroots into the image's files).
#
#   DOCKER_CMD="docker" IMAGE_SPEC=<base spec hash> bash scripts/add-python-packages.sh BASE_IMAGE INDEX_URL NAME==VERSION...
#
# - Every requirement is pinned (NAME==VERSION) and installed with --no-deps: the list is the
#   whole set, as in pip's hash-checking mode; list the dependencies the image lacks too.
# - Wheels only, for the image's Python (CPython 3.11, glibc, this machine's architecture):
#   nothing is built here, so nothing runs at set-up but the index's files being unpacked.
# - Each wheel's sha256 is compared with the one its index gives (the link's #sha256= fragment);
#   a file the index gives no hash for is refused.
# - The new image is the base image's files plus the packages under /usr/local; its tag is the
#   base's with `-py<hash of the base spec and the list>`, so a changed list is a new image; its
#   labels name the packages (ai-toolbelt.packages, read by DockerSandbox and told to the model).
set -euo pipefail

BASE="${1:?base image}"
INDEX="${2:-}"
shift 2
read -r -a DOCKER <<<"${DOCKER_CMD:-docker}"
# shellcheck source=scripts/sandbox-image-lib.sh
. "$(dirname "$0")/sandbox-image-lib.sh"
log() { echo "[setup-sandbox] $*" >&2; }
die() {
  echo "[setup-sandbox] ERROR: $*" >&2
  exit 1
}

[ "$#" -gt 0 ] || die "no Python packages given"
for requirement in "$@"; do
  [[ "$requirement" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!_-]*$ ]] ||
    die "--add-python takes pinned requirements NAME==VERSION, got '$requirement'"
done
if [ -z "$INDEX" ]; then
  INDEX="$(python3 -m pip config get global.index-url 2>/dev/null || true)"
  INDEX="${INDEX:-https://pypi.org/simple}"
fi
INDEX="${INDEX%/}"
HASH="$(printf '%s' "${IMAGE_SPEC:-} $INDEX $*" | sha256sum | cut -c1-12)"
IMAGE="${BASE}-py${HASH}"

python_ok() {
  [ "$("${DOCKER[@]}" image inspect -f '{{index .Config.Labels "ai-toolbelt.python.spec"}}' "$IMAGE" 2>/dev/null)" = "$HASH" ] &&
    "${DOCKER[@]}" run --rm --runtime=runsc --network=none --pids-limit=128 --read-only --user 65534:65534 \
      --tmpfs /tmp "$IMAGE" python3 -c '
import importlib.metadata as m, sys
for pin in sys.argv[1:]:
    name, version = pin.split("==")
    assert m.version(name) == version, pin
' "$@"
}

if python_ok "$@"; then
  log "image $IMAGE is ready"
  echo "$IMAGE"
  exit 0
fi

log "adding $* to $BASE (from $INDEX)"
tmp="$(mktemp -d)"
container=""
cleanup() {
  [ -n "$container" ] && "${DOCKER[@]}" rm -f "$container" >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/wheels" "$tmp/site" "$tmp/root"
arch="$(uname -m)"
trusted=()
if [[ "$INDEX" == http://* ]]; then
  # pip refuses a plain-HTTP index unless told: a local mirror may be one (the hashes still come from it).
  host="${INDEX#http://}"
  trusted=(--trusted-host "${host%%[/:]*}")
  log "warning: $INDEX is plain HTTP"
fi
python3 -m pip download "${trusted[@]}" --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --index-url "$INDEX/" --python-version 3.11 --implementation cp \
  --abi cp311 --abi abi3 --abi none \
  --platform "manylinux_2_36_$arch" --platform "manylinux_2_28_$arch" \
  --platform "manylinux_2_17_$arch" --platform "manylinux2014_$arch" --platform any \
  -d "$tmp/wheels" "$@" >&2 ||
  die "pip could not download $* as wheels for CPython 3.11 from $INDEX (pinned versions with wheels only)"

# The index's own hashes, compared with the files received.
python3 - "$INDEX" "$tmp/wheels" "$@" <<'PY' || die "a wheel does not match the hash its index gives"
import hashlib, html.parser, os, re, sys, urllib.request
index, folder, pins = sys.argv[1], sys.argv[2], sys.argv[3:]
links = {}

class Links(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            url, _, fragment = href.partition("#")
            links[os.path.basename(url)] = fragment

for pin in pins:
    name = re.sub(r"[-_.]+", "-", pin.split("==")[0]).lower()
    with urllib.request.urlopen(f"{index}/{name}/", timeout=60) as page:
        Links().feed(page.read().decode("utf-8", "replace"))
for wheel in sorted(os.listdir(folder)):
    fragment = links.get(wheel, "")
    if not fragment.startswith("sha256="):
        sys.exit(f"{wheel}: the index gives no sha256 for it")
    with open(os.path.join(folder, wheel), "rb") as data:
        digest = hashlib.sha256(data.read()).hexdigest()
    if digest != fragment[len("sha256="):]:
        sys.exit(f"{wheel}: sha256 {digest}, the index says {fragment}")
    print(f"[setup-sandbox] {wheel}: sha256 matches the index", file=sys.stderr)
PY

python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --no-index --no-compile \
  --target "$tmp/site" "$tmp"/wheels/*.whl >&2 || die "pip could not install the wheels"
container="$("${DOCKER[@]}" create "$BASE")"
"${DOCKER[@]}" export "$container" | tar -C "$tmp/root" -x
site="$tmp/root/usr/local/lib/python3.11/dist-packages"
mkdir -p "$site"
cp -a "$tmp/site/." "$site/"
packages="$(list_packages "$tmp/root")"
spec="$("${DOCKER[@]}" image inspect -f '{{index .Config.Labels "ai-toolbelt.image.spec"}}' "$BASE")"
tar -C "$tmp/root" -c . | "${DOCKER[@]}" import "${IMAGE_CONFIG[@]}" \
  --change "LABEL ai-toolbelt.image.spec=$spec" \
  --change "LABEL ai-toolbelt.python.spec=$HASH" \
  --change "LABEL ai-toolbelt.packages=$packages" \
  - "$IMAGE" >/dev/null
python_ok "$@" || die "image $IMAGE does not have $* importable under runsc"
log "imported $IMAGE"
echo "$IMAGE"
