// The import direction of docs/architecture.md as a lint rule, so a layering mistake fails `npm run lint`
// (and CI) instead of waiting for a reviewer. tests/lint/layers.test.ts proves that each rule fires.
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Where browser code lives; `'use client'` files under app/ count too (detected per file). */
const BROWSER = ['components/', 'lib/client/'];

const SQL_PACKAGES = ['drizzle-orm', 'pg', '@electric-sql/pglite', 'pg-pool', 'postgres'];

/** Folders whose modules run on the server only, and must say so with `import 'server-only'`. */
// lib/db/schema.ts is left out: drizzle-kit loads it outside Next, and table definitions hold no secret.
export const SERVER_ONLY_FOLDERS = [
  'lib/api/',
  'lib/openapi/',
  'lib/services/',
  'lib/db/client.ts',
  'lib/db/repositories/',
  'lib/jobs/server/',
  'lib/catalog/',
];

/**
 * Each rule: the files it applies to (`from`), the targets they may not import (`forbid`, repository paths
 * or package names), the targets exempt from it (`allow`), and the reason printed with the error.
 */
const RULES = [
  {
    from: (f, ctx) => BROWSER.some((p) => f.startsWith(p)) || (f.startsWith('app/') && ctx.useClient),
    forbid: [
      'lib/db',
      'lib/services',
      'lib/engine',
      'lib/api',
      'lib/jobs',
      'lib/inference',
      'lib/storage',
      'lib/config',
      'lib/logger',
      'lib/runtime',
      'lib/event-loop',
      'lib/catalog',
      'lib/tinker',
      // Thread entries (lib/body, lib/export) run outside Next.js, where `server-only` throws, so this list is
      // what keeps them out of a browser bundle.
      'lib/body',
      'lib/export',
      'lib/openapi',
      'server-only',
      ...SQL_PACKAGES,
    ],
    why: 'browser code talks to the server through /v1 (lib/client), never by importing server modules',
  },
  {
    from: (f) => f.startsWith('lib/tinker/'),
    forbid: ['lib/db', 'lib/services', 'lib/api', 'lib/storage', 'lib/jobs', 'lib/inference', 'app/', 'components/'],
    why: "lib/tinker is the Tinker SDK's wire (decoding and encoding, docs/tinker.md §2): pure, no I/O; services and routes call it",
  },
  {
    from: (f) => f.startsWith('lib/engine/'),
    forbid: ['lib/', 'app/', 'components/'],
    allow: ['lib/engine/'],
    why: 'lib/engine is pure ML code: it imports nothing of the app outside itself',
  },
  {
    from: (f) => /^(lib|app|components)\//.test(f) && !f.startsWith('lib/db/'),
    forbid: SQL_PACKAGES,
    why: 'only lib/db runs SQL: use or add a repository function there',
  },
  {
    from: (f) => f.startsWith('lib/db/'),
    forbid: ['lib/'],
    allow: ['lib/db/', 'lib/config', 'lib/logger', 'lib/errors', 'lib/schemas/', 'lib/bytes', 'lib/event-loop/'],
    why: 'lib/db is the floor the services stand on: it imports only configuration, logging, the wire types and the event-loop helpers, never a layer above it',
  },
  {
    from: (f) => f.startsWith('lib/event-loop/'),
    forbid: ['lib/'],
    allow: ['lib/event-loop/', 'lib/config', 'lib/logger'],
    why: 'lib/event-loop is the ground floor that lib/db, lib/api and lib/inference share: it imports only configuration and logging',
  },
  {
    from: (f) => f.startsWith('lib/jobs/server/'),
    forbid: ['lib/services', 'lib/api'],
    why: 'the job queue sits below the services (they create jobs and read their state): it reads the base-model catalog from lib/catalog and tells the serving caches of new checkpoints through a notification (lib/db/notifications.ts)',
  },
  {
    from: (f) => f.startsWith('lib/catalog/'),
    forbid: ['lib/services', 'lib/api', 'lib/jobs', 'lib/db', 'lib/storage'],
    why: 'lib/catalog (the base-models file and its rules) is below the services and the job queue, which both read it',
  },
  {
    from: (f) => f.startsWith('lib/inference/'),
    forbid: ['lib/services', 'lib/db', 'lib/api', 'lib/jobs', 'lib/storage', 'lib/runtime'],
    why: 'lib/inference runs models it is handed (the services resolve names, weights and permissions): it never reads the database or calls a service',
  },
  {
    from: (f) => f.startsWith('lib/jobs/worker/'),
    forbid: ['lib/db', 'lib/services', 'lib/api', 'lib/jobs/server', 'lib/storage', 'server-only'],
    why: 'a training worker (possibly on another machine) reaches the database only through the worker routes',
  },
  {
    from: (f) =>
      !f.startsWith('lib/api/') && !f.startsWith('lib/openapi/') && !/^app\/(api\/)?v1\/.*route\.ts$/.test(f),
    forbid: ['lib/api'],
    // The server's bootstrap (instrumentation.ts) installs the liveness probe's fast path on Node's HTTP server.
    allow: ['lib/api/fast-path'],
    why: 'lib/api is the HTTP layer of the app/v1 and app/api/v1 route handlers; services, jobs, inference and pages throw lib/errors and call services',
  },
  {
    from: (f) => f.startsWith('lib/'),
    forbid: ['app/', 'components/'],
    why: 'lib never imports the UI or the routes',
  },
  {
    from: (f) => f.startsWith('lib/schemas/') || f.startsWith('lib/errors/'),
    forbid: ['lib/'],
    allow: ['lib/schemas/', 'lib/errors/'],
    why: 'the wire contract (lib/schemas) and the error type (lib/errors) are shared by browser and server: they import only each other',
  },
];

/** The repository path (`lib/db/client`) or package name an import names. */
function target(source, file) {
  if (source.startsWith('@/')) return source.slice(2);
  if (source.startsWith('.'))
    return path
      .relative(ROOT, path.resolve(ROOT, path.dirname(file), source))
      .split(path.sep)
      .join('/');
  return source;
}

function matches(t, entry) {
  return (
    t === entry ||
    t.startsWith(entry.endsWith('/') ? entry : `${entry}/`) ||
    (entry.endsWith('/') && t === entry.slice(0, -1))
  );
}

const isTest = (f) => /\.test\.tsx?$/.test(f) || f.startsWith('tests/') || f.startsWith('e2e/');

/** @type {import('eslint').Rule.RuleModule} */
const layers = {
  meta: {
    type: 'problem',
    docs: { description: 'Enforces the import direction between the layers of docs/architecture.md' },
    schema: [],
  },
  create(context) {
    const file = path.relative(ROOT, context.filename).split(path.sep).join('/');
    if (file.startsWith('..') || isTest(file)) return {};
    const body = context.sourceCode.ast.body;
    const useClient = body.some((n) => n.type === 'ExpressionStatement' && n.directive === 'use client');
    const active = RULES.filter((r) => r.from(file, { useClient }));
    let importsServerOnly = false;

    const check = (node, source) => {
      if (typeof source !== 'string') return;
      if (source === 'server-only') importsServerOnly = true;
      const t = target(source, file);
      for (const rule of active) {
        if (!rule.forbid.some((e) => matches(t, e))) continue;
        if (rule.allow?.some((e) => matches(t, e))) continue;
        context.report({ node, message: `${file} may not import '${source}': ${rule.why}.` });
      }
    };

    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
      'Program:exit'(node) {
        if (
          SERVER_ONLY_FOLDERS.some((p) => file.startsWith(p)) &&
          !importsServerOnly &&
          !file.startsWith('lib/db/migrations/')
        ) {
          context.report({
            node,
            message: `${file} is server code: add import 'server-only' so a browser bundle that reaches it fails the build.`,
          });
        }
      },
    };
  },
};

const plugin = { rules: { layers } };
export default plugin;
