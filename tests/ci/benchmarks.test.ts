import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// CI runs every benchmark quickly so that none breaks unnoticed; a bench:* script missing from .ci/run's loop
// is exactly how bench:constrained stopped running for weeks without anyone seeing it.
const root = path.resolve(import.meta.dirname, '..', '..');

describe('.ci/run', () => {
  it('runs every bench:* script of package.json in its quick mode', () => {
    const scripts = Object.keys(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts);
    const benches = scripts.filter((s) => s.startsWith('bench:')).map((s) => s.slice('bench:'.length));
    // The lanes it runs them in: server_benches="api …", thread_benches="train …".
    const lanes = [...fs.readFileSync(path.join(root, '.ci', 'run'), 'utf8').matchAll(/^\w+_benches="([\w ]+)"$/gm)];
    expect(lanes.length, ".ci/run's benchmark lanes").toBeGreaterThan(0);
    expect(lanes.flatMap((lane) => lane[1].split(' ')).sort()).toEqual(benches.sort());
  });
});
