#!/usr/bin/env bash
# The compiled build on the images' Node, next to the Node this project is developed on: takes the official
# Node 24 binary, headers included, that ops/node/images-node.sh fetches from the npm registry once, rebuilds
# pkcs11js — the one addon compiled at install, as the image builds it — against it, runs the compiled-build test
# (test/integration/build/compiled-build.test.ts: API and signer started from dist/ with node alone, one payment
# signed and recorded) under it, with the signer's Keccak-256 on that Node's OpenSSL
# (test/unit/signer/keccak-256.test.ts), and puts the Node 20 build of pkcs11js back, whatever happened.
# Usage: bash ops/test/node24-smoke.sh   (TREASURY_IMAGES_NODE_VERSION picks another 24.x)
set -euo pipefail
cd "$(dirname "$0")/../.."
node_dir="$(bash ops/node/images-node.sh)"
work="$(mktemp -d)"
addon_build=node_modules/pkcs11js/build
cp -a "$addon_build" "$work/pkcs11js-build"
restore() {
  rm -rf "$addon_build"
  cp -a "$work/pkcs11js-build" "$addon_build"
  rm -rf "$work"
}
trap restore EXIT

node24="$node_dir/bin/node"
echo "== Node $("$node24" --version) (ABI $("$node24" -p process.versions.modules))"

node_gyp="$(npm prefix -g)/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js"
(cd node_modules/pkcs11js && "$node24" "$node_gyp" rebuild --nodedir="$node_dir" >"$work/node-gyp.log" 2>&1) || {
  cat "$work/node-gyp.log" >&2
  exit 1
}

"$node24" node_modules/mocha/bin/mocha.js --config .mocharc.json test/integration/build/compiled-build.test.ts \
  test/unit/signer/keccak-256.test.ts
