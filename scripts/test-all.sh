#!/usr/bin/env bash
# The whole test suite: Vitest (units + in-process route tests), then a production build and the
# Playwright API/browser specs against it. Uses PGlite unless DATABASE_URL points at PostgreSQL.
# Prints "N passed, N failed" last; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1
out=".data/test-results"
rm -rf "$out" && mkdir -p "$out"

db_label=${DATABASE_URL:+postgres}
echo "== vitest (${db_label:-pglite})"
npx vitest run --reporter=default --reporter=json --outputFile.json="$out/vitest.json"
vitest_rc=$?

echo "== next build"
if npx next build > "$out/build.log" 2>&1; then build_rc=0; else build_rc=1; tail -40 "$out/build.log"; fi

pw_rc=1
if [ "$build_rc" = 0 ]; then
  echo "== playwright (${db_label:-pglite})"
  # A fresh embedded database for the e2e server; only that server process opens it.
  rm -rf .data/e2e
  # The screenshots project is for people to look at (npx playwright test --project=screenshots), not CI.
  # On PostgreSQL the browser specs get their own database (E2E_DATABASE_URL): the server's training worker
  # would otherwise pick up the jobs the route tests left queued.
  DATABASE_URL="${E2E_DATABASE_URL:-${DATABASE_URL:-}}" PLAYWRIGHT_JSON_OUTPUT_NAME="$out/playwright.json" \
    npx playwright test --project=chromium --reporter=list,json
  pw_rc=$?
fi

node -e '
const fs = require("fs");
const read = (f) => { try { return JSON.parse(fs.readFileSync(f, "utf8")); } catch { return null; } };
const v = read(process.argv[1]); const p = read(process.argv[2]);
let passed = 0, failed = 0, skipped = 0;
if (v) { passed += v.numPassedTests; failed += v.numFailedTests + (v.numRuntimeErrorTestSuites ?? 0); skipped += v.numPendingTests + v.numTodoTests; }
else failed += 1;
if (p) { passed += p.stats.expected + p.stats.flaky; failed += p.stats.unexpected; skipped += p.stats.skipped; }
else failed += 1;
if (process.argv[3] !== "0") failed += 1;
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
' "$out/vitest.json" "$out/playwright.json" "$build_rc"

[ "$vitest_rc" = 0 ] && [ "$build_rc" = 0 ] && [ "$pw_rc" = 0 ]
