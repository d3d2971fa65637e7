#!/usr/bin/env bash
# Installs Debian's Chromium for the browser end-to-end tests (test/e2e), driven by
# playwright-core with executablePath /usr/bin/chromium. Never a downloaded browser build.
# Idempotent: does nothing when Chromium is already there.
#
#   sudo bash scripts/setup-chromium.sh
set -euo pipefail

CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
log() { echo "[setup-chromium] $*"; }

if [ -x "$CHROMIUM" ]; then
  log "$("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM") already installed"
  exit 0
fi
[ "$(id -u)" = 0 ] || {
  echo "[setup-chromium] ERROR: run as root (sudo bash $0), or install Chromium and set CHROMIUM_PATH" >&2
  exit 1
}
started=$(date +%s)
log "installing Debian's chromium"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# With recommends: they bring the fonts pages are rendered (and screenshotted) with.
apt-get install -y -qq chromium >/dev/null
log "$("$CHROMIUM" --version) installed in $(($(date +%s) - started)) s"
