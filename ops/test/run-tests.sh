#!/usr/bin/env bash
# `npm test`: typecheck every project (the reference graph enforces signer/ ↛ src/, policy/ ↛ both),
# lint the layers (eslint.config.js: who may import whom inside src/ too, no regex built at run time), check
# the formatting (prettier --check),
# then every mocha suite against real SoftHSM and real PostgreSQL (embedded unless TEST_DATABASE_URL).
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v softhsm2-util >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ]; then
    echo "softhsm2 missing: installing it"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq softhsm2 >/dev/null
  else
    echo "softhsm2 is required: sudo apt-get install -y softhsm2" >&2
    exit 1
  fi
fi

echo "== typecheck (tsc -b)"
npx --no-install tsc -b

echo "== lint (eslint) and format (prettier --check)"
npm run --silent lint
npm run --silent format:check

echo "== tests"
npx --no-install mocha --config .mocharc.json "${@:-test/**/*.test.ts}"
