import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as openapiRoute from '@/app/v1/openapi.json/route';
import { routeManifest } from '@/app/v1/route-manifest';
import { renderWorkerOpenApi, WORKER_OPENAPI_FILE } from '@/scripts/openapi-document';
import { renderRouteManifest, ROUTE_MANIFEST_FILE } from '@/scripts/route-manifest';
import { call } from '../support/helpers';

function routeFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFiles(full);
    return entry.name === 'route.ts' ? [full] : [];
  });
}

describe('GET /v1/openapi.json', () => {
  it('lists every route file in the manifest scripts/route-manifest.ts generates from the folders', async () => {
    const committed = fs.readFileSync(path.join(process.cwd(), ROUTE_MANIFEST_FILE), 'utf8');
    expect(committed, 'stale: run npx tsx scripts/route-manifest.ts').toBe(await renderRouteManifest());
  });

  it("documents every route file on disk, each under the path its methods() registered, which is its folder's", () => {
    const root = path.join(process.cwd(), 'app');
    const onDisk = [...routeFiles(path.join(root, 'v1')), ...routeFiles(path.join(root, 'api', 'v1'))]
      .map((f) => '/' + path.relative(root, path.dirname(f)).split(path.sep).join('/'))
      .filter((p) => !p.includes('[...') && p !== '/v1/openapi.json')
      .map((p) => p.replace(/\[(\w+)\]/g, '{$1}'))
      .sort();
    expect(routeManifest.map((r) => r.path).sort()).toEqual(onDisk);
  });

  it('serves an OpenAPI 3.1 document generated from the route declarations', async () => {
    const res = await call(openapiRoute, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    const create = doc.paths['/v1/preview/models'].post;
    expect(create.summary).toMatch(/Create a model/);
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['project', 'name', 'base_model']);
    expect(Object.keys(create.responses).sort()).toEqual(['200', '401', '413', '422']);
    const list = doc.paths['/v1/preview/models/{model_id}/checkpoints'].get;
    const limit = list.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', required: false });
    expect(doc.paths['/v1/preview/models'].get['x-extension']).toBe(true);
    expect(doc.paths['/v1/health'].get.security).toEqual([]);
    for (const ops of Object.values(doc.paths) as Record<string, { summary?: string; tags?: string[] }>[]) {
      for (const op of Object.values(ops)) {
        expect(op.summary).toBeTruthy();
        expect(op.tags?.[0]).not.toBe('other');
      }
    }
  });

  it("is what the Python worker's tests check its calls against (workers/python/tests/openapi.json)", async () => {
    const res = await call(openapiRoute, 'GET', '/v1/openapi.json');
    const committed = fs.readFileSync(path.join(process.cwd(), WORKER_OPENAPI_FILE), 'utf8');
    // A stale copy would let the worker's fake servers drift from the routes: regenerate it.
    expect(committed, 'stale: run npx tsx --conditions=react-server scripts/openapi-document.ts').toBe(
      renderWorkerOpenApi(res.body),
    );
  });
});
