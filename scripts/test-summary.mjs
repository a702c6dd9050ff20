// Sums the suites' reports into test-all.sh's last line, "N passed, N failed, N skipped", and names each failed
// test above it ("failed: …") with the start of its error. CI keeps only the tail of a run's output, so a failure
// that is not named here cannot be told apart from any other one afterwards.
// Arguments: vitest.json playwright.json build-exit-code pytest.xml pytest-exit-code suites-asked-for
import fs from 'node:fs';
import path from 'node:path';

const [vitestFile, playwrightFile, buildRc, pytestFile, pytestRc, only] = process.argv.slice(2);
const wanted = only.split(',');
const read = (f) => {
  try {
    return JSON.parse(fs.readFileSync(f, 'utf8'));
  } catch {
    return null;
  }
};
// ANSI colours and line breaks would make one failure several unreadable lines.
const firstLines = (text) =>
  String(text ?? '')
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, 2)
    .join(' | ')
    .slice(0, 300);

let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];

// A suite that was asked for and left no report counts as one failure.
if (wanted.includes('vitest')) {
  const v = read(vitestFile);
  if (v) {
    passed += v.numPassedTests;
    failed += v.numFailedTests + (v.numRuntimeErrorTestSuites ?? 0);
    skipped += v.numPendingTests + v.numTodoTests;
    for (const file of v.testResults) {
      const name = path.relative(process.cwd(), file.name);
      const bad = file.assertionResults.filter((t) => t.status === 'failed');
      for (const t of bad) failures.push(`vitest ${name} › ${t.fullName}: ${firstLines(t.failureMessages?.[0])}`);
      if (file.status === 'failed' && bad.length === 0)
        failures.push(`vitest ${name} (the file): ${firstLines(file.message)}`);
    }
  } else {
    failed += 1;
    failures.push('vitest: no report');
  }
}

if (wanted.includes('playwright')) {
  const p = read(playwrightFile);
  if (p) {
    passed += p.stats.expected + p.stats.flaky;
    failed += p.stats.unexpected;
    skipped += p.stats.skipped;
    const walk = (suite, titles) => {
      for (const spec of suite.specs ?? []) {
        for (const test of spec.tests ?? []) {
          if (test.status !== 'unexpected') continue;
          const last = test.results?.at(-1);
          failures.push(
            `playwright ${spec.file} › ${[...titles, spec.title].join(' › ')}: ${firstLines(last?.error?.message)}`,
          );
        }
      }
      for (const child of suite.suites ?? []) walk(child, [...titles, child.title]);
    };
    // The top-level suites are the spec files, named by spec.file already.
    for (const suite of p.suites ?? []) walk(suite, []);
    for (const e of p.errors ?? []) failures.push(`playwright (outside a test): ${firstLines(e.message)}`);
  } else {
    failed += 1;
    failures.push('playwright: no report');
  }
}
if (buildRc !== '0') {
  failed += 1;
  failures.push('next build failed');
}

// pytest junit: <testsuite tests= failures= errors= skipped=>; absent when pytest did not run.
let junit = null;
try {
  junit = fs.readFileSync(pytestFile, 'utf8');
} catch {}
if (junit !== null) {
  const attr = (n) => Number((junit.match(new RegExp(`<testsuite[^>]*\\s${n}="(\\d+)"`)) || [])[1] || 0);
  const bad = attr('failures') + attr('errors');
  passed += attr('tests') - bad - attr('skipped');
  failed += bad;
  skipped += attr('skipped');
  for (const m of junit.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const problem = (m[2] ?? '').match(/<(failure|error)\b[^>]*?message="([^"]*)"/);
    if (!problem) continue;
    const at = (n) => (m[1].match(new RegExp(`\\b${n}="([^"]*)"`)) || [])[1] ?? '?';
    failures.push(
      `pytest ${at('classname')}::${at('name')}: ${firstLines(
        problem[2]
          .replace(/&#10;/g, '\n')
          .replace(/&quot;/g, '"')
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&amp;/g, '&'),
      )}`,
    );
  }
} else if (pytestRc !== '0') {
  failed += 1;
  failures.push('pytest: exited without a report');
}

for (const f of failures) console.log(`failed: ${f}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
