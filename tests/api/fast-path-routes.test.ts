import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fastPathFetch, routeFetch } from '../support/route-fetch';

// The /v1 API, and the Tinker SDK's routes under /api/v1 (docs/tinker.md §2.1).
const ROOTS = [path.join(process.cwd(), 'app', 'v1'), path.join(process.cwd(), 'app', 'api', 'v1')];

function routeFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFiles(full);
    return entry.name === 'route.ts' ? [full] : [];
  });
}

describe('the fast path serves every route file at its own path', () => {
  // A route file names its path in methods() (the fast path has no file system to read); a path that differs
  // from the file's place would serve it at the wrong URL in production only.
  it('each route file names the path Next serves it at', () => {
    const files = ROOTS.flatMap((root) => routeFiles(root));
    expect(files.length).toBeGreaterThan(40);
    for (const file of files) {
      const at = `/${path.relative(path.join(process.cwd(), 'app'), path.dirname(file)).split(path.sep).join('/')}`;
      const source = fs.readFileSync(file, 'utf8');
      const named = /\bmethods\(\s*'([^']+)'/.exec(source)?.[1];
      if (at.includes('[...')) {
        // The catch-all 404 stays with Next: it is what every path the fast path does not know falls to.
        expect(named, file).toBeUndefined();
        continue;
      }
      expect(named, file).toBe(at);
    }
  });

  // Route modules register as Next loads them (all at start-up, but in the background): were a static path and a
  // parameter at one level, a request in that window could reach the parameter's handler with the static name.
  it('no folder holds both a [parameter] and a static route folder', () => {
    const walk = (dir: string): void => {
      const subdirs = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
      const dynamic = subdirs.filter((d) => d.name.startsWith('[') && !d.name.startsWith('[...'));
      if (dynamic.length > 0)
        expect(
          subdirs.map((d) => d.name),
          dir,
        ).toEqual(dynamic.map((d) => d.name));
      for (const d of subdirs) walk(path.join(dir, d.name));
    };
    for (const root of ROOTS) walk(root);
  });
});

describe("the route tests' fetch through the fast path (tests/support/route-fetch.ts)", () => {
  // The chat, checkpoint-upload and worker-protocol tests use fastPathFetch: were it to reach the handlers some other
  // way, they would no longer test the fast path. Only its writing of the answer adds the security headers.
  it('answers from the fast path, where routeFetch calls the handler directly', async () => {
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email": 1}' };
    const fast = await fastPathFetch('http://localhost/v1/auth/token', init);
    expect(fast.status).toBe(422);
    expect(fast.headers.get('x-frame-options')).toBe('DENY');
    expect(fast.headers.get('vary')).toMatch(/Accept-Encoding/);
    expect((await fast.json()).detail[0].loc).toEqual(['body', 'email']);
    const direct = await routeFetch('http://localhost/v1/auth/token', init);
    expect(direct.status).toBe(422);
    expect(direct.headers.get('x-frame-options')).toBeNull();
    // What the fast path leaves to Next gets app/v1/[...path]'s JSON 404.
    expect((await fastPathFetch('http://localhost/v1/no-such-route')).status).toBe(404);
  });
});
