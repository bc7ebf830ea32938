#!/usr/bin/env bash
# The images' build steps, run by the Dockerfile's build stage (`bash ops/build/image-build.sh /image`) and,
# as plain commands without a container engine, by test/integration/build/image-build.test.ts: the same
# steps, so what the test starts is what the image carries.
#   1. npm run build            → dist/ (tsc, then the esbuild bundles of ops/build/bundle-entries.ts)
#   2. npm run build:dashboard  → .build/dashboard/ (ops/dashboard/build-dashboard.ts: the API types, Vite)
#   3. assemble <out>: dist/, .build/dashboard/ (built pages and hashed assets only: not the generated API
#      types beside them in .build/dashboard-api/) and package.json (it says the files are ES modules).
# Run from the source root with every dependency installed. <out> must not exist or be empty.
# Defends: an image without the dashboard (the API answers /dashboard/ with 503 dashboard_not_built) or with a
# partial build: each step's output is checked before it is assembled.
# Does not: install dependencies, or decide which node_modules the runtime gets (the Dockerfile's prod-deps).
set -euo pipefail
out=${1:?usage: ops/build/image-build.sh <out-dir>}
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "image-build: $out is not empty" >&2
  exit 1
fi

npm run --silent build
npm run --silent build:dashboard

for f in dist/src/api/main.js dist/signer/main.js dist/src/gate/main.js dist/cli/main.js .build/dashboard/index.html; do
  test -s "$f" || { echo "image-build: $f missing after the build" >&2; exit 1; }
done
ls .build/dashboard/assets/*.js >/dev/null 2>&1 || { echo "image-build: no dashboard assets" >&2; exit 1; }

mkdir -p "$out/.build"
cp -R dist "$out/dist"
cp -R .build/dashboard "$out/.build/dashboard"
cp package.json "$out/package.json"
echo "image-build: assembled $out (dist/, .build/dashboard/, package.json)"
