#!/usr/bin/env bash
# The whole test suite: Vitest (units + in-process route tests), then a production build and the
# Playwright API/browser specs against it, with the Python worker's pytest suite running beside them. Uses PGlite
# unless DATABASE_URL points at PostgreSQL.
# Prints "N passed, N failed" last; exits non-zero when anything failed.
# `npm test -- --only vitest` (or `--only vitest,pytest`…) runs some of the suites: vitest, playwright, pytest
# (playwright includes its build). `--db-only` limits Vitest to the files that reach the database (CI's second
# pass, on PostgreSQL): the pure engine, client, lint and docs tests and the engine comparisons (Transformers,
# llama.cpp) give the same answer whatever the database (tests/db-only.mjs lists them with the evidence).
# `--no-build` runs the Playwright specs against the production build already in .next (CI builds once, then runs
# suites side by side, each with its own TUNEBOARD_TEST_RESULTS folder).
# `--projects=main,isolated` runs only those Vitest projects (vitest.config.mts: main, isolated, timing): CI runs the
# timing project, whose assertions compare wall-clock times, once the browser specs beside it are done.
set -uo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1
only="vitest,playwright,pytest"
vitest_files=()
vitest_projects=()
build=1
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --projects=*) IFS=',' read -ra names <<< "${arg#--projects=}"; for name in "${names[@]}"; do vitest_projects+=(--project "$name"); done ;;
    --db-only)
      vitest_files=(tests lib/services lib/jobs)
      # Read by vitest.config.mts (Vitest's --exclude does not reach its projects), which then leaves out the files
      # tests/db-only.mjs lists, each group with its reason: those that never reach the database, the engine
      # comparisons whose statements the other files send, and the event-loop stall files (threads, not the database).
      export TUNEBOARD_TEST_DB_ONLY=1 ;;
    --only=*) only="${arg#--only=}" ;;
    --only) only="__next__" ;;
    *) if [ "$only" = "__next__" ]; then only="$arg"; else echo "unknown argument: $arg (use --only vitest,playwright,pytest, --db-only, --no-build and --projects=main,isolated,timing)" >&2; exit 2; fi ;;
  esac
done
for suite in ${only//,/ }; do
  case "$suite" in vitest | playwright | pytest) ;; *) echo "unknown suite: $suite (vitest, playwright, pytest)" >&2; exit 2 ;; esac
done
runs() { [[ ",$only," == *",$1,"* ]]; }
out="${TUNEBOARD_TEST_RESULTS:-.data/test-results}"
rm -rf "$out" && mkdir -p "$out"

db_label=${DATABASE_URL:+postgres}
# The built-in engine's Hugging Face tests compare against Transformers: give them the worker's Python.
if [ -z "${TUNEBOARD_PYTHON:-}" ] && [ -x .venv-worker/bin/python ]; then export TUNEBOARD_PYTHON="$PWD/.venv-worker/bin/python"; fi
vitest_rc=0
if runs vitest; then
  echo "== vitest (${db_label:-pglite})"
  npx vitest run "${vitest_files[@]}" "${vitest_projects[@]}" --reporter=default --reporter=json --outputFile.json="$out/vitest.json"
  vitest_rc=$?
fi

build_rc=0
if runs playwright && [ "$build" = 1 ]; then
  echo "== next build"
  if npx next build > "$out/build.log" 2>&1; then build_rc=0; else build_rc=1; tail -40 "$out/build.log"; fi
elif runs playwright && [ ! -f .next/BUILD_ID ]; then
  echo "--no-build: there is no production build in .next (npm run build)"; build_rc=1
fi

# The Python training worker's tests (workers/python/tests), against this build, when a Python with the worker
# is available (.ci/run creates .venv-worker). pytest's exit code 5 means "no tests collected": not a failure.
py_ready=0
if runs pytest && bash scripts/worker-python.sh -c 'import tuneboard_worker, pytest' >/dev/null 2>&1; then py_ready=1; fi
run_pytest() {
  OMP_NUM_THREADS=1 bash scripts/worker-python.sh -m pytest workers/python/tests -p no:cacheprovider \
    --junitxml="$out/pytest.xml" -q
}
# Beside the browser specs when both run: the specs mostly wait on the browser and on the server's training jobs
# (about half a core of 2), pytest mostly trains on one thread, and one after the other they took 12 of CI's
# minutes. Its output is printed when it is done.
py_pid=""
if [ "$py_ready" = 1 ] && runs playwright && [ "$build_rc" = 0 ]; then
  run_pytest > "$out/pytest.log" 2>&1 &
  py_pid=$!
fi

pw_rc=0
if runs playwright && [ "$build_rc" = 0 ]; then
  echo "== playwright (${db_label:-pglite})${py_pid:+, with pytest beside it}"
  # A fresh embedded database for the e2e server; only that server process opens it.
  rm -rf .data/e2e
  # The screenshots project is for people to look at (npx playwright test --project=screenshots), not CI.
  # On PostgreSQL the browser specs get their own database (E2E_DATABASE_URL): the server's training worker
  # would otherwise pick up the jobs the route tests left queued.
  DATABASE_URL="${E2E_DATABASE_URL:-${DATABASE_URL:-}}" PLAYWRIGHT_JSON_OUTPUT_NAME="$out/playwright.json" \
    npx playwright test --project=chromium --reporter=list,json
  pw_rc=$?
elif runs playwright; then
  pw_rc=1
fi

py_rc=0
if [ -n "$py_pid" ]; then
  wait "$py_pid"
  py_rc=$?
  echo "== pytest (workers/python)"
  cat "$out/pytest.log"
elif [ "$py_ready" = 1 ]; then
  echo "== pytest (workers/python)"
  run_pytest
  py_rc=$?
elif runs pytest; then
  echo "== pytest skipped: no Python with the worker (python3 -m venv .venv-worker && .venv-worker/bin/pip install ./workers/python[test])"
fi
[ "$py_rc" = 5 ] && py_rc=0

node scripts/test-summary.mjs "$out/vitest.json" "$out/playwright.json" "$build_rc" "$out/pytest.xml" "$py_rc" "$only"

[ "$vitest_rc" = 0 ] && [ "$build_rc" = 0 ] && [ "$pw_rc" = 0 ] && [ "$py_rc" = 0 ]
