import path from 'node:path';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * Each layer rule (eslint-rules/layers.mjs, docs/architecture.md §3) fires on a file that breaks it, and a
 * file that keeps to it passes. The files are linted as if they lived at the given paths; none is written.
 */
const ROOT = path.join(import.meta.dirname, '..', '..');
let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

async function problems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

const cases: [rule: string, file: string, code: string][] = [
  [
    'browser code never imports the database',
    'components/models/fake.tsx',
    "import { getDb } from '@/lib/db/client';\nexport const x = getDb;\n",
  ],
  [
    'browser code never imports services',
    'lib/client/fake.ts',
    "import { createModel } from '@/lib/services/models';\nexport const x = createModel;\n",
  ],
  [
    'browser code never imports the engine',
    'components/playground/fake.tsx',
    "import { Tokenizer } from '@/lib/engine/tokenizer';\nexport const x = Tokenizer;\n",
  ],
  [
    'browser code never imports lib/api',
    'components/jobs/fake.tsx',
    "import { json } from '@/lib/api/respond';\nexport const x = json;\n",
  ],
  [
    'browser code never imports the job queue',
    'lib/client/fake.ts',
    "import { claimJob } from '@/lib/jobs/server/queue';\nexport const x = claimJob;\n",
  ],
  [
    "a 'use client' page never imports services",
    'app/(dashboard)/fake/client.tsx',
    "'use client';\nimport { createModel } from '@/lib/services/models';\nexport const x = createModel;\n",
  ],
  [
    'lib/engine imports nothing outside itself',
    'lib/engine/fake.ts',
    "import { ChatRequest } from '@/lib/schemas/chat';\nexport type X = ChatRequest;\n",
  ],
  [
    'lib/engine imports nothing outside itself (relative)',
    'lib/engine/train/fake.ts',
    "import { config } from '../../config';\nexport const x = config;\n",
  ],
  [
    'only lib/db runs SQL',
    'lib/services/fake.ts',
    "import 'server-only';\nimport { sql } from 'drizzle-orm';\nexport const x = sql;\n",
  ],
  [
    'only lib/db opens PostgreSQL',
    'lib/jobs/server/fake.ts',
    "import 'server-only';\nimport { Pool } from 'pg';\nexport const x = Pool;\n",
  ],
  [
    'the worker side of lib/jobs never imports lib/db',
    'lib/jobs/worker/fake.ts',
    "import { getDb } from '@/lib/db/client';\nexport const x = getDb;\n",
  ],
  [
    'the worker side never imports the queue',
    'lib/jobs/worker/handlers/fake.ts',
    "import { claimJob } from '../../server/queue';\nexport const x = claimJob;\n",
  ],
  [
    'services never import lib/api',
    'lib/services/fake.ts',
    "import 'server-only';\nimport { ApiError } from '@/lib/api/respond';\nexport const x = ApiError;\n",
  ],
  [
    'pages never import lib/api',
    'app/(dashboard)/fake/page.tsx',
    "import { SESSION_COOKIE } from '@/lib/api/auth';\nexport const x = SESSION_COOKIE;\n",
  ],
  [
    'lib never imports components',
    'lib/inference/fake.ts',
    "import { Button } from '@/components/ui/button';\nexport const x = Button;\n",
  ],
  [
    'server modules say server-only',
    'lib/services/fake.ts',
    "import { getDb } from '@/lib/db/client';\nexport const x = getDb;\n",
  ],
  [
    'lib/tinker does no I/O',
    'lib/tinker/fake.ts',
    "import { getDb } from '@/lib/db/client';\nexport const x = getDb;\n",
  ],
  [
    'lib/tinker never calls services',
    'lib/tinker/fake.ts',
    "import { submit } from '@/lib/services/tinker/training';\nexport const x = submit;\n",
  ],
  [
    'browser code never imports the Tinker wire',
    'components/models/fake.tsx',
    "import { forwardResultJson } from '@/lib/tinker/results';\nexport const x = forwardResultJson;\n",
  ],
  [
    'lib/db never imports a service',
    'lib/db/repositories/fake.ts',
    "import 'server-only';\nimport { findBaseModel } from '@/lib/services/base-models';\nexport const x = findBaseModel;\n",
  ],
  [
    'lib/db never imports the server composition root',
    'lib/db/fake.ts',
    "import { startServer } from '@/lib/runtime/server-start';\nexport const x = startServer;\n",
  ],
  [
    'lib/event-loop imports nothing above it',
    'lib/event-loop/fake.ts',
    "import { getDb } from '@/lib/db/client';\nexport const x = getDb;\n",
  ],
  [
    'the job queue never imports services',
    'lib/jobs/server/fake.ts',
    "import 'server-only';\nimport { modelsChanged } from '@/lib/services/served-models';\nexport const x = modelsChanged;\n",
  ],
  [
    'the base-model catalog never imports services',
    'lib/catalog/fake.ts',
    "import 'server-only';\nimport { describeBaseModels } from '@/lib/services/base-models';\nexport const x = describeBaseModels;\n",
  ],
  [
    'lib/inference never imports services',
    'lib/inference/fake.ts',
    "import { findBaseModel } from '@/lib/services/base-models';\nexport const x = findBaseModel;\n",
  ],
  [
    'lib/inference never reads the database',
    'lib/inference/fake.ts',
    "import { getDb } from '@/lib/db/client';\nexport const x = getDb;\n",
  ],
  [
    'browser code never imports a body-parsing thread',
    'components/models/fake.tsx',
    "import { parseBody } from '@/lib/body/parse';\nexport const x = parseBody;\n",
  ],
  [
    'browser code never imports the OpenAPI builder',
    'lib/client/fake.ts',
    "import { buildOpenApi } from '@/lib/openapi/build';\nexport const x = buildOpenApi;\n",
  ],
  ['lib/openapi says server-only', 'lib/openapi/fake.ts', "import { z } from 'zod';\nexport const x = z;\n"],
  ['no console outside the logger', 'lib/inference/fake.ts', "export function f() {\n  console.log('hi');\n}\n"],
  ['no process.env outside lib/config', 'lib/storage/fake.ts', 'export const x = process.env.TUNEBOARD_S3_BUCKET;\n'],
];

describe('layer rules (eslint-rules/layers.mjs)', () => {
  it.each(cases)('%s', async (_rule, file, code) => {
    const found = await problems(file, code);
    expect(found.filter((p) => /^(tuneboard\/layers|no-console|no-restricted-properties):/.test(p))).not.toEqual([]);
  });

  it('allowed imports pass', async () => {
    expect(
      await problems('app/v1/fake/route.ts', "import { route } from '@/lib/api/route';\nexport const x = route;\n"),
    ).toEqual([]);
    expect(
      await problems('app/api/v1/fake/route.ts', "import { route } from '@/lib/api/route';\nexport const x = route;\n"),
    ).toEqual([]);
    expect(
      await problems('lib/tinker/fake.ts', "import { ApiError } from '@/lib/errors';\nexport const x = ApiError;\n"),
    ).toEqual([]);
    expect(await problems('lib/engine/fake.ts', "import { Model } from './model';\nexport const x = Model;\n")).toEqual(
      [],
    );
    expect(
      await problems(
        'components/models/fake.tsx',
        "import { apiFetch } from '@/lib/client/api/api-fetch';\nexport const x = apiFetch;\n",
      ),
    ).toEqual([]);
    expect(
      await problems(
        'lib/services/fake.ts',
        "import 'server-only';\nimport { getDb } from '@/lib/db/client';\nexport const x = getDb;\n",
      ),
    ).toEqual([]);
    expect(
      await problems(
        'lib/jobs/worker/fake.ts',
        "import type { WorkerJob } from '../protocol';\nexport type X = WorkerJob;\n",
      ),
    ).toEqual([]);
  });
});
