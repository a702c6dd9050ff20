import 'server-only';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { ApiError } from '@/lib/errors';
import { config } from '@/lib/config';
import { getDb } from '@/lib/db/client';
import * as artifactsRepo from '@/lib/db/repositories/artifacts';
import { deleteArtifacts, putArtifactStream, readArtifactText } from '@/lib/storage';
import { entityByName, type Principal } from './accounts';
import { jsonNestingExceeds } from '@/lib/schemas/json-depth';
import { parseSftJsonl, SftDataError, type SftExample } from '@/lib/schemas/sft-data';
import { validateStoredSftFile } from './sft-lines';

/**
 * SFT datasets are versioned artifacts: rows in `artifacts` (name → version → files) with the files in the
 * store under `datasets/<uuid>/`. A `training_data_url` names one as `wandb-artifact:///entity/project/name:vN`
 * (docs/contract.md §3.2); the two-slash form, `:latest` and no version (= latest) are accepted too.
 */
const URL_PATTERN = /^wandb-artifact:\/\/\/?([^/:]+)\/([^/:]+)\/([^/:]+)(?::([^/:]+))?$/;
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/**
 * metadata.json is parsed whole (on the request thread: it is small by this bound), so it is held to 1 MiB; ART
 * writes a few hundred bytes there (docs/contract.md §3.2).
 */
export const METADATA_MAX_BYTES = 1024 * 1024;

export interface DatasetRef {
  entity: string;
  project: string;
  name: string;
  version: number;
  file: string;
  key: string;
}

const urlError = (text: string, url: string) => ApiError.valueError(['body', 'training_data_url'], text, url);

/** The file a job reads: train.jsonl, else trajectories.jsonl, else the first *.jsonl by name (docs/contract.md §3.2). */
export function pickTrainingFile(files: string[]): string | undefined {
  const sorted = [...files].sort();
  return (
    ['train.jsonl', 'trajectories.jsonl'].find((f) => sorted.includes(f)) ?? sorted.find((f) => f.endsWith('.jsonl'))
  );
}

export async function resolveTrainingData(principal: Principal, url: string): Promise<DatasetRef> {
  const match = URL_PATTERN.exec(url.trim());
  if (!match)
    throw urlError('training_data_url must look like wandb-artifact:///<entity>/<project>/<name>:<version>', url);
  const [, entityName, project, name, versionText] = match;
  const entity = entityByName(principal, entityName);
  let version: number | undefined;
  if (versionText !== undefined && versionText !== 'latest') {
    if (!/^v\d+$/.test(versionText)) throw urlError(`Unknown artifact version '${versionText}': use vN or latest`, url);
    version = Number(versionText.slice(1));
    // Versions are PostgreSQL integers: anything past their range cannot exist (and would fail in SQL).
    if (!Number.isSafeInteger(version) || version > 2_147_483_647) {
      throw urlError(`Training data artifact not found: ${entityName}/${project}/${name}:${versionText}`, url);
    }
  }
  // An entity outside the caller's scope is reported exactly like a missing artifact.
  const row = entity
    ? await artifactsRepo.findArtifact(await getDb(), { entityId: entity.id, project, name, version })
    : undefined;
  if (!row) {
    throw urlError(
      `Training data artifact not found: ${entityName}/${project}/${name}${versionText ? `:${versionText}` : ''}`,
      url,
    );
  }
  const file = pickTrainingFile(row.files.map((f) => f.name));
  if (!file)
    throw urlError(`Training data artifact ${entityName}/${project}/${name}:v${row.version} has no .jsonl file`, url);
  return { entity: entityName, project, name, version: row.version, file, key: `${row.prefix}/${file}` };
}

/** One issue per bad line (pydantic's list of errors), and one counting those past the list, as the form shows them. */
function badLinesError(err: SftDataError, loc: string[]): ApiError {
  const issues = err.problems.map((p) => ({
    loc,
    msg: `Value error, ${err.file} line ${p.line}: ${p.reason}`,
    type: 'value_error',
  }));
  const unlisted = err.total - err.problems.length;
  if (unlisted > 0)
    issues.push({ loc, msg: `Value error, ${err.file}: ${unlisted} more bad lines not listed`, type: 'value_error' });
  return ApiError.validation(issues);
}

/** Validates every line now, so a bad dataset is a 422 at job creation rather than a failed job (docs/contract.md §3.2). */
export async function validateTrainingData(ref: DatasetRef, url: string): Promise<number> {
  let count: number;
  try {
    count = await validateStoredSftFile(ref.file, ref.key);
  } catch (err) {
    if (err instanceof SftDataError) throw urlError(err.message, url);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw urlError(`Training data file ${ref.file} is missing`, url);
    throw err;
  }
  if (count === 0) throw urlError(`${ref.file} has no training examples`, url);
  return count;
}

/** Loads the examples a job trains on (already validated at creation; re-parsed for line-precise failures). */
export async function loadTrainingExamples(key: string, file: string): Promise<SftExample[]> {
  const text = await readArtifactText(key);
  if (text === undefined) throw new SftDataError(file, 0, 'the training data file is missing from the artifact store');
  return parseSftJsonl(file, text);
}

export interface UploadFile {
  name: string;
  stream: NodeJS.ReadableStream;
}

/**
 * Stores an uploaded dataset as a new version: files are streamed to the store under a fresh prefix (never
 * held whole in memory), the JSONL is validated line by line, and only then is the version row written.
 * A failed upload leaves nothing behind.
 */
export async function uploadDataset(
  principal: Principal,
  target: { entity?: string | null; project: string; name: string },
  files: AsyncIterable<UploadFile>,
  opts: { validate?: boolean } = {},
) {
  const entity = target.entity == null ? principal.personalEntity : entityByName(principal, target.entity);
  if (!entity) throw new ApiError('forbidden', `Entity '${target.entity}' is not accessible with this API key`);
  const prefix = `datasets/${crypto.randomUUID()}`;
  const stored: { name: string; size: number }[] = [];
  try {
    let remaining = config.largeBodyLimitBytes;
    for await (const file of files) {
      if (!FILE_NAME.test(file.name) || stored.some((f) => f.name === file.name)) {
        file.stream.resume();
        throw ApiError.valueError(['body', 'files'], `Invalid or duplicate file name: ${JSON.stringify(file.name)}`);
      }
      const metadata = file.name === 'metadata.json';
      const size = await putArtifactStream(`${prefix}/${file.name}`, file.stream, {
        limit: metadata ? Math.min(remaining, METADATA_MAX_BYTES) : remaining,
        onLimit: () =>
          metadata && remaining > METADATA_MAX_BYTES
            ? new ApiError('payload_too_large', 'metadata.json is larger than 1 MiB')
            : new ApiError('payload_too_large', 'Request body too large: the limit is TUNEBOARD_MAX_BODY_MB'),
      });
      remaining -= size;
      stored.push({ name: file.name, size });
    }
    const trainingFile = pickTrainingFile(stored.map((f) => f.name));
    if (!trainingFile)
      throw ApiError.valueError(['body', 'files'], 'Upload a .jsonl file (train.jsonl or trajectories.jsonl)');
    let metadata: Record<string, unknown> = {};
    if (stored.some((f) => f.name === 'metadata.json')) {
      try {
        const text = (await readArtifactText(`${prefix}/metadata.json`)) ?? '';
        if (jsonNestingExceeds(text)) throw new Error('too deep');
        const parsed: unknown = JSON.parse(text);
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
        metadata = parsed as Record<string, unknown>;
      } catch {
        throw ApiError.valueError(['body', 'files', 'metadata.json'], 'metadata.json must be a JSON object');
      }
    }
    let numExamples: number | null = null;
    if (opts.validate !== false) {
      try {
        // Off the request thread, one line at a time (lib/services/sft-lines.ts).
        numExamples = await validateStoredSftFile(trainingFile, `${prefix}/${trainingFile}`);
      } catch (err) {
        if (err instanceof SftDataError) throw badLinesError(err, ['body', 'files', trainingFile]);
        throw err;
      }
      if (numExamples === 0)
        throw ApiError.valueError(['body', 'files', trainingFile], `${trainingFile} has no training examples`);
    }
    const row = await artifactsRepo.insertNextVersion(await getDb(), {
      entityId: entity.id,
      project: target.project,
      name: target.name,
      kind: 'dataset',
      prefix,
      files: stored,
      metadata: { ...metadata, format: 'jsonl', num_examples: numExamples, training_file: trainingFile },
    });
    return {
      id: row.id,
      entity: entity.name,
      project: row.project,
      name: row.name,
      version: row.version,
      training_data_url: `wandb-artifact:///${entity.name}/${row.project}/${row.name}:v${row.version}`,
      files: stored,
      num_examples: numExamples,
      created_at: row.createdAt.toISOString(),
    };
  } catch (err) {
    await deleteArtifacts(prefix);
    throw err;
  }
}

/**
 * For seeders and tests: a dataset from in-memory contents, stored without line validation, the way a
 * dataset written to the store by other tools arrives. Job creation validates every line regardless.
 */
export async function storeDataset(
  principal: Principal,
  input: { entity?: string | null; project: string; name: string; files: Record<string, string | Uint8Array> },
) {
  async function* files(): AsyncGenerator<UploadFile> {
    for (const [name, data] of Object.entries(input.files)) yield { name, stream: Readable.from([Buffer.from(data)]) };
  }
  return uploadDataset(principal, input, files(), { validate: false });
}

export async function listDatasets(principal: Principal, q: { entity?: string; project?: string }) {
  const scope =
    q.entity === undefined ? principal.memberships : principal.memberships.filter((m) => m.name === q.entity);
  const names = new Map(scope.map((m) => [m.id, m.name]));
  const rows = await artifactsRepo.listArtifactsOf(await getDb(), [...names.keys()], q.project);
  return {
    object: 'list' as const,
    data: rows.map((row) => ({
      id: row.id,
      entity: names.get(row.entityId)!,
      project: row.project,
      name: row.name,
      version: row.version,
      training_data_url: `wandb-artifact:///${names.get(row.entityId)}/${row.project}/${row.name}:v${row.version}`,
      files: row.files,
      num_examples: typeof row.metadata.num_examples === 'number' ? row.metadata.num_examples : null,
      created_at: row.createdAt.toISOString(),
    })),
  };
}
