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
    const loop = /^for bench in ([\w ]+); do$/m.exec(fs.readFileSync(path.join(root, '.ci', 'run'), 'utf8'));
    expect(loop, ".ci/run's benchmark loop").not.toBeNull();
    expect(loop![1].split(' ').sort()).toEqual(benches.sort());
  });
});
