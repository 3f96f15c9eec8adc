#!/usr/bin/env bash
# Prints the folder of a pinned Node.js (with corepack beside it), installing it first
# from the npm registry when this machine does not have it yet. The registry's `node`
# package carries the official Linux binaries and headers; corepack comes from its own
# package, because those binaries ship without it.
#
#   export PATH="$(bash .ci/node.sh 24.21.0):$PATH"
set -euo pipefail
version="${1:?usage: node.sh NODE_VERSION}"
corepack_version=0.34.6
prefix="${OPENWORKER_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/openworker-node}/node-$version"
bin="$prefix/bin"
if [ ! -x "$bin/node" ] || [ "$("$bin/node" -p process.version 2>/dev/null)" != "v$version" ]; then
  rm -rf "$prefix"
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-save --no-package-lock --loglevel=error \
    "node@$version" "corepack@$corepack_version" >&2
  mkdir -p "$bin"
  ln -sf ../node_modules/node/bin/node "$bin/node"
  ln -sf ../node_modules/corepack/dist/corepack.js "$bin/corepack"
fi
"$bin/node" -e 'process.exit(process.version === "v" + process.argv[1] ? 0 : 1)' "$version" >&2
echo "$bin"
