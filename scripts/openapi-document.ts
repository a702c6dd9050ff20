/**
 * Writes the worker routes' part of the OpenAPI document the server serves at /v1/openapi.json (their paths, and the
 * components they refer to) into workers/python/tests/openapi.json. The Python worker's tests read it to check every
 * body the worker sends and every answer their fake servers give (workers/python/tests/openapi_check.py), so a fake
 * cannot drift from the server. tests/api/openapi.test.ts fails when the file is stale, naming this command:
 *   npx tsx --conditions=react-server scripts/openapi-document.ts
 * Only the worker routes: the whole document is about 650 kB, the worker's part about 60.
 */
import fs from 'node:fs';
import path from 'node:path';
import { routeManifest } from '../app/v1/route-manifest';
import { buildOpenApiDocument } from '../lib/openapi/build';
import packageJson from '../package.json';

/** The document's copy for the worker's tests, relative to the repository. */
export const WORKER_OPENAPI_FILE = 'workers/python/tests/openapi.json';

type Document = ReturnType<typeof buildOpenApiDocument>;

/** The worker routes (`/v1/workers/…`) of a served document, everything else of it as it is. */
export function workerRoutesOf(doc: Document): Document {
  const paths = Object.fromEntries(Object.entries(doc.paths).filter(([p]) => p.startsWith('/v1/workers/')));
  return { ...doc, paths };
}

/** The file's text: one key per line, so that a change to a schema is a readable diff. */
export function renderWorkerOpenApi(doc: Document): string {
  return JSON.stringify(workerRoutesOf(doc), null, 2) + '\n';
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const doc = buildOpenApiDocument(routeManifest, { version: packageJson.version });
  fs.writeFileSync(path.join(import.meta.dirname, '..', WORKER_OPENAPI_FILE), renderWorkerOpenApi(doc));
}
