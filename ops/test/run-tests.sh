#!/usr/bin/env bash
# `npm test`: first build what the suites would otherwise each build again: dist/ (`npm run build`, unless
# current), so that every `xx` run (bin/xx.mjs), every `npm start` child (ops/sandbox/start.ts) and every
# signer or API process a harness starts runs the compiled bundles instead of loading the sources through
# tsx, and the sandbox contracts and the dashboard (ops/test/prepare-artifacts.ts); then every mocha suite
# against real SoftHSM and real PostgreSQL (embedded unless TEST_DATABASE_URL): in parallel worker processes
# (TREASURY_TEST_JOBS, default 3; test/support/root-hooks.ts gives them one PostgreSQL), then the files listed
# in ops/test/serial-tests.txt, which must not share the machine with the others (two at a time, beside
# each other only). Beside all of it, at the lowest CPU priority: typecheck every project (the reference graph enforces signer/ ↛ src/, policy/ ↛ both),
# lint the layers (eslint.config.js: who may import whom inside src/ too, file and function sizes, no regex
# built at run time), lint with the type-aware rules (eslint.typed.config.js: no floating promise) and check
# the formatting (prettier --check); eslint and prettier keep a cache under .build/, so a second run checks
# only what changed. Once the tests are over, the checks still running go to normal priority, so that other
# work on the machine does not starve them (ops/test/background-checks.sh). Each phase prints its time.
# Arguments: the test files (or globs, or folders) to run instead of all of them.
# The last line is the total over both runs: "tests: N passed, N failed, N skipped".
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

# shellcheck source=ops/test/background-checks.sh
source ops/test/background-checks.sh
checks=(typecheck lint typedlint format)
# TREASURY_TEST_CHECKS=off: the tests alone, for a second run over a tree whose checks a first run already
# passed (.ci/run's pass on the aws-kms key backend); anything else runs them.
[ "${TREASURY_TEST_CHECKS:-on}" = off ] && checks=()
work=$(mktemp -d)
# On the way out, stop whatever still runs beside (the checks, when the run ends early) before removing their logs.
trap 'for c in "${checks[@]}"; do stop_check "$c"; done; kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p .build

# dist/ for the suites, unless every entry point there is newer than every source it is built from (the rule
# bin/xx.mjs and npm start follow, bin/build-freshness.mjs). Its files are dated back to when the build started,
# so that a source edited while it ran still counts as newer: the launchers then run that source, not stale code.
# It is `npm run build` with --noCheck (emit only, the same files, a third of the CPU): tsc -b beside it checks
# the types, and the run stops when it fails.
build_dist() {
  if node --input-type=module -e "
    import { buildIsCurrent } from './bin/build-freshness.mjs';
    const entries = ['dist/src/api/main.js', 'dist/signer/main.js', 'dist/src/gate/main.js', 'dist/cli/main.js'];
    process.exit(entries.every((f) => buildIsCurrent(f)) ? 0 : 1);"; then
    echo "dist/ is current"
    return 0
  fi
  local started
  started=$(date +%s.%N)
  rm -rf dist
  node node_modules/typescript-7/bin/tsc -p tsconfig.build.json --noCheck &&
    node --import tsx ops/build/bundle-entries.ts &&
    find dist -type f -exec touch -m -d "@$started" {} +
}

if [ "${#checks[@]}" -gt 0 ]; then
  echo "== build (dist/, contracts, dashboard); typecheck (tsc -b), lint (eslint, twice) and format (prettier --check) beside the tests"
else
  echo "== build (dist/, contracts, dashboard)"
fi
checks_started=$(date +%s)
# The checks run at the lowest CPU priority (nice 19) beside the whole run: the suites need only what the
# build makes, and while they keep both cores busy the checks get what is left — mostly the idle moments and the
# phase of timing-bound suites that run alone — so they add little to the wall time. When the tests are over,
# the checks still running are lifted to normal priority (ops/test/background-checks.sh), so that a machine
# busy with other work does not starve them. Their results are waited for and printed at the end; any failure
# fails `npm test` as before.
for check in "${checks[@]}"; do start_check "$check" 19; done
build_dist >"$work/build.log" 2>&1 &
build=$!
node --import tsx ops/test/prepare-artifacts.ts >"$work/artifacts.log" 2>&1 &
artifacts=$!
# Prints one step's result and log; returns 1 when it failed.
report() {
  if wait "${!1}"; then
    echo "-- $1: ok"
    cat "$work/$1.log"
  else
    echo "-- $1: FAILED"
    cat "$work/$1.log"
    return 1
  fi
}
builds_failed=0
for step in build artifacts; do report "$step" || builds_failed=1; done
echo "-- builds: $(($(date +%s) - checks_started)) s"
# On a failed build the EXIT trap stops the checks still running.
[ "$builds_failed" = 0 ] || exit 1

echo "== tests"
shopt -s globstar nullglob
files=()
for spec in "${@:-test/**/*.test.ts}"; do
  if [ -d "$spec" ]; then
    files+=("${spec%/}"/**/*.test.ts)
  else
    # shellcheck disable=SC2206 # a glob given in quotes is expanded here, as mocha would
    files+=($spec)
  fi
done
if [ "${#files[@]}" -eq 0 ]; then
  echo "no test files match: $*" >&2
  exit 1
fi
serial_list=()
while read -r line; do
  line="${line%%#*}"
  line="${line//[[:space:]]/}"
  [ -n "$line" ] && serial_list+=("$line")
done <ops/test/serial-tests.txt
parallel=()
serial=()
for file in "${files[@]}"; do
  alone=0
  for s in "${serial_list[@]}"; do [ "$file" = "$s" ] && alone=1; done
  if [ "$alone" = 1 ]; then serial+=("$file"); else parallel+=("$file"); fi
done

# Each mocha run adds its counts to this file (test/support/summary-reporter.cjs) instead of printing them.
export TREASURY_TEST_SUMMARY_FILE="$work/summary"
: >"$TREASURY_TEST_SUMMARY_FILE"
# TREASURY_TEST_FILE_TIMES: each mocha run writes its own file's times; the two are put together at the end.
times="${TREASURY_TEST_FILE_TIMES:-}"
status=0
phase_started=$(date +%s)
if [ "${#parallel[@]}" -gt 0 ]; then
  TREASURY_TEST_FILE_TIMES=${times:+$work/times-parallel} \
    npx --no-install mocha --config .mocharc.json --parallel --jobs "${TREASURY_TEST_JOBS:-3}" "${parallel[@]}" ||
    status=$?
  echo "-- parallel suites: $(($(date +%s) - phase_started)) s"
fi
if [ "${#serial[@]}" -gt 0 ]; then
  echo "== tests that run alone (ops/test/serial-tests.txt)"
  phase_started=$(date +%s)
  # Beside each other (they mostly wait on their deadlines, a second or two each), but beside nothing else.
  TREASURY_TEST_FILE_TIMES=${times:+$work/times-serial} \
    npx --no-install mocha --config .mocharc.json --parallel --jobs 2 "${serial[@]}" || status=$?
  echo "-- suites run alone: $(($(date +%s) - phase_started)) s"
fi
if [ -n "$times" ]; then
  cat "$work"/times-* 2>/dev/null | sort -rn >"$times" || true
fi
if [ "${#checks[@]}" -gt 0 ]; then
  echo "== checks"
  phase_started=$(date +%s)
  lift_checks "${checks[@]}"
  for check in "${checks[@]}"; do report "$check" || status=1; done
  echo "-- checks: done $(($(date +%s) - phase_started)) s after the tests"
else
  echo "== checks: off (TREASURY_TEST_CHECKS=off)"
fi
awk '{ p += $1; f += $2; s += $3 } END { printf "\ntests: %d passed, %d failed, %d skipped\n", p, f, s }' \
  "$TREASURY_TEST_SUMMARY_FILE"
exit "$status"
