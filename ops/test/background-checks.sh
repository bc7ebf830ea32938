# Sourced by ops/test/run-tests.sh: the four checks (typecheck and the dashboard's, lint, typed lint, format) that run beside the
# tests at the lowest CPU priority, and what lifts them to normal priority once the tests are over.
#
# What it defends: a run on a busy machine. At nice 19 a check takes only what the suites leave; once the
# suites are over, that is right on an idle machine (it gets every core) and wrong on a loaded one: beside
# two CPU hogs at nice 0 a check at nice 19 gets about 1 % of the CPU, and the run does not finish. So when
# the tests end, every check still running is lifted to nice 0:
# - by `renice` of its process group, when this user may lower a niceness (root, or RLIMIT_NICE): each check
#   runs in a process group of its own, so the new priority reaches every process it started (npx starts
#   node) and every thread (setpriority on a process group sets each thread; on one pid, only that thread);
# - otherwise, by stopping it and running it again at nice 0, but only when it is starved: it got less than a
#   tenth of a core in the last second. An unstarved check (an idle machine) keeps running, so a quiet run
#   loses nothing. A check run again loses its run's work in progress: tsc -b keeps the projects it finished
#   (their build info), eslint and prettier write their caches only at the end.
# What it does not defend: a machine loaded during the tests themselves (the checks then wait, by design), nor
# a check that is slow at any priority.
# Needs bash 4 and Linux's /proc (the CPU a check got); a process group of its own but not a session of its
# own: a new session would be its own autogroup, where nice 19 no longer yields to the tests.

# Runs check $1 at niceness $2 in place of the calling (sub)shell.
exec_check() {
  local niceness=$2
  case "$1" in
    # Every project of the reference graph, then the dashboard against the API's OpenAPI types (written first).
    typecheck) exec nice -n "$niceness" npm run -s typecheck:all ;;
    lint) exec nice -n "$niceness" npx --no-install eslint --cache --cache-location .build/eslint-cache . ;;
    # The type-aware rules (eslint.typed.config.js: no-floating-promises) need the type checker: minutes, not
    # seconds, so they run as their own check, uncached (a change in one file changes the types of others).
    typedlint) exec nice -n "$niceness" npx --no-install eslint -c eslint.typed.config.js src signer base policy ops ;;
    format) exec nice -n "$niceness" npx --no-install prettier --check --cache --cache-location .build/prettier-cache . ;;
    *) echo "unknown check: $1" >&2 && return 2 ;;
  esac
}

# Starts check $1 at niceness $2 in the background, its output in $work/$1.log; the variable named $1 holds
# its process id, which is also its process group's id (job control on: a background job gets its own group).
start_check() {
  set -m
  exec_check "$1" "$2" >"$work/$1.log" 2>&1 &
  set +m
  printf -v "$1" '%s' "$!"
}

# Stops check $1's whole process group, if it was started (before it runs again, and on the way out).
stop_check() {
  [ -n "${!1:-}" ] && kill -- "-${!1}" 2>/dev/null || true
}

# 0 when this user may lower a niceness (what lifting a check by renice needs).
may_lift_priority() {
  (renice 1 -p "$BASHPID" && renice 0 -p "$BASHPID") >/dev/null 2>&1
}

# CPU clock ticks used so far by the processes of process group $1, with those of the children they waited for
# (so that the sum does not drop when a child ends).
group_ticks() {
  local pid stat total=0 fields
  for pid in $(pgrep -g "$1"); do
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
    # The fields after the command name (which may hold spaces): utime, stime, cutime, cstime are the 12th to 15th.
    read -r -a fields <<<"${stat##*) }"
    total=$((total + fields[11] + fields[12] + fields[13] + fields[14]))
  done
  echo "$total"
}

# After the tests: every check still running goes to nice 0 (see the header).
lift_checks() {
  local check before=() starved=() tick
  if may_lift_priority; then
    for check in "$@"; do renice 0 -g "${!check}" >/dev/null 2>&1 || true; done
    return 0
  fi
  tick=$(getconf CLK_TCK)
  for check in "$@"; do before+=("$(group_ticks "${!check}")"); done
  sleep 1
  for check in "$@"; do
    # Less than a tenth of a core in that second, and still running (a finished check uses nothing).
    if [ $(($(group_ticks "${!check}") - before[0])) -lt $((tick / 10)) ] && kill -0 "${!check}" 2>/dev/null; then
      starved+=("$check")
    fi
    before=("${before[@]:1}")
  done
  for check in "${starved[@]}"; do
    echo "-- $check: starved at nice 19 once the tests were over; run again at nice 0"
    stop_check "$check"
    wait "${!check}" 2>/dev/null || true
    start_check "$check" 0
  done
}
