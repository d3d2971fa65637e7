#!/usr/bin/env bash
# Source this file: it puts a Node >= 22 first on PATH. ai@7 needs Node 22+, while
# some machines ship Node 20; rather than fail, install Node 24 from the npm
# registry (the only registry reachable on such machines) into a cache folder.
#   . scripts/ensure-node.sh
# AI_TOOLBELT_NODE_DIR overrides the cache folder (default: ~/.cache/ai-toolbelt/node24).

__ensure_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(__ensure_node_major)" -lt 22 ]; then
  __node_dir="${AI_TOOLBELT_NODE_DIR:-${HOME:-/root}/.cache/ai-toolbelt/node24}"
  if [ ! -x "$__node_dir/node_modules/.bin/node" ]; then
    echo "ensure-node: node $(node -v 2>/dev/null || echo missing) is older than 22; installing node@24 into $__node_dir" >&2
    mkdir -p "$__node_dir"
    npm install --prefix "$__node_dir" --no-audit --no-fund --loglevel=error node@24 >&2 || {
      echo "ensure-node: could not install node@24 from the npm registry" >&2
      return 1 2>/dev/null || exit 1
    }
  fi
  export PATH="$__node_dir/node_modules/.bin:$PATH"
  unset __node_dir
fi

if [ "$(__ensure_node_major)" -lt 22 ]; then
  echo "ensure-node: still on node $(node -v); need >= 22" >&2
  return 1 2>/dev/null || exit 1
fi
unset -f __ensure_node_major
