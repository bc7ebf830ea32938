#!/usr/bin/env bash
# Runs a command — a bench — on the Node the images run (the Dockerfile's node:24) instead of this machine's: the
# binary ops/node/images-node.sh fetches once, first on PATH for the command, so that `node` and npm's scripts — the
# bench and every process it starts (process.execPath) — are that Node. The native addons load on either Node as
# they are built: pkcs11js and secp256k1 are Node-API addons.
# Usage: bash bench/on-images-node.sh npm run bench        (npm run bench:node24 runs exactly that)
#        TREASURY_IMAGES_NODE_VERSION=24.x.y bash bench/on-images-node.sh npm run bench:signer
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$#" -gt 0 ] || { echo "usage: bash bench/on-images-node.sh <command…>" >&2; exit 2; }
dir="$(bash ops/node/images-node.sh)"
echo "on-images-node: Node $("$dir/bin/node" --version) from $dir" >&2
PATH="$dir/bin:$PATH" exec "$@"
