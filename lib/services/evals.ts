import 'server-only';
import crypto from 'node:crypto';
import { ApiError, type ValidationIssue } from '@/lib/errors';
import { config } from '@/lib/config';
import { getDb, type DbOrTx } from '@/lib/db/client';
import * as evalsRepo from '@/lib/db/repositories/evals';
import * as modelsRepo from '@/lib/db/repositories/models';
import { upsertRunMetrics } from '@/lib/db/repositories/run-metrics';
import type { AutoEvalSetting, EvalScoreValue } from '@/lib/db/schema';
import { parseChatRequest } from '@/lib/inference/chat-request';
import {
  DEFAULT_EVAL_SAMPLING,
  MAX_EVAL_EXAMPLES,
  type AutoEvalBody,
  type ClientScoresBody,
  type CreateEvalRunBody,
  type EvalExampleDto,
  type EvalResultRowDto,
  type EvalRunDto,
  type EvalSampling,
  type EvalSetDto,
  type ScorerInput,
  type StoredScorer,
} from '@/lib/schemas/evals';
import { EvalLineError, parseEvalLine, type EvalExampleInput } from '@/lib/schemas/eval-set-lines';
import { MAX_LISTED_BAD_LINES } from '@/lib/schemas/sft-data';
import { accessibleEntityIds, entityByName, listScope, type Principal } from './accounts';
import { resolveChatModel } from './chat-models';
import { compileScorers, PASS_THRESHOLD, type CompiledScorer } from './eval-scorers';
import { abortLocalRun, wakeEvalRunner } from './eval-runner';
import { requireModel } from './models';
import { requirePermission } from './permissions';
import type { UploadFile } from './datasets';
import { autoEvalDto } from './eval-dto';

/**
 * Evaluations (docs/contract.md §11, docs/evals.md): eval sets, eval runs and their results, client scores, and a
 * model's auto-eval setting. Runs execute in eval-runner.ts.
 */

export const EVAL_SET_NOT_FOUND = 'Eval set not found';
export const EVAL_RUN_NOT_FOUND = 'Eval run not found';

// ---------------------------------------------------------------------------------------------------------------
// Eval sets

function toSetDto(row: evalsRepo.EvalSetWithEntity): EvalSetDto {
  return {
    object: 'eval_set',
    id: row.id,
    entity: row.entityName,
    project: row.project,
    name: row.name,
    version: row.version,
    num_examples: row.numExamples,
    created_at: row.createdAt.toISOString(),
    sha256: row.sha256,
  };
}

/** Work done on the request thread between two yields while parsing a set (a health check should not wait longer). */
const PARSE_SLICE_MS = 5;

/**
 * Reads the uploaded JSONL (one file: a raw body or one multipart `file` part), checks every line and stores the
 * set as the next version of its name. The file is held in memory: a set has at most 10,000 examples and lines are
 * capped by TUNEBOARD_MAX_DATASET_LINE_MB, the whole body by TUNEBOARD_MAX_BODY_MB. Parsing yields to the event loop
 * every few milliseconds, so a large set does not hold other requests up.
 */
export async function uploadEvalSet(
  principal: Principal,
  target: { entity?: string; project: string; name: string },
  files: AsyncIterable<UploadFile>,
): Promise<EvalSetDto> {
  const entity = target.entity == null ? principal.personalEntity : entityByName(principal, target.entity);
  if (!entity) throw new ApiError('forbidden', `Entity '${target.entity}' is not accessible with this API key`);
  let bytes: Buffer | undefined;
  for await (const file of files) {
    if (bytes) {
      file.stream.resume();
      throw ApiError.valueError(['body', 'file'], 'Upload one JSONL file per eval set');
    }
    const chunks: Buffer[] = [];
    for await (const chunk of file.stream) chunks.push(Buffer.from(chunk as Uint8Array));
    bytes = Buffer.concat(chunks);
  }
  if (!bytes || bytes.byteLength === 0) throw ApiError.valueError(['body'], 'The eval set file is empty');
  const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
  const examples = await parseEvalSet(bytes);
  const row = await evalsRepo.insertEvalSet(await getDb(), {
    entityId: entity.id,
    project: target.project,
    name: target.name,
    sha256,
    createdBy: principal.userId,
    examples,
  });
  return toSetDto({ ...row, entityName: entity.name });
}

/** Every line checked; a 422 lists the bad ones (up to MAX_LISTED_BAD_LINES, then a count), as dataset uploads do. */
async function parseEvalSet(bytes: Buffer): Promise<EvalExampleInput[]> {
  const examples: EvalExampleInput[] = [];
  const problems: { line: number; reason: string }[] = [];
  let bad = 0;
  let start = 0;
  let lineNo = 0;
  let sliceStart = Date.now();
  while (start < bytes.byteLength) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.byteLength;
    lineNo++;
    const length = end - start;
    const problem = (reason: string) => {
      bad++;
      if (problems.length < MAX_LISTED_BAD_LINES) problems.push({ line: lineNo, reason });
    };
    if (length > config.maxDatasetLineBytes) {
      problem(`the line is longer than TUNEBOARD_MAX_DATASET_LINE_MB (${length} bytes)`);
    } else {
      const text = bytes.toString('utf8', start, end).replace(/\r$/, '');
      if (text.trim() !== '') {
        try {
          const example = parseEvalLine(lineNo, text);
          if (examples.length < MAX_EVAL_EXAMPLES) examples.push(example);
          else problem(`more than ${MAX_EVAL_EXAMPLES} examples: an eval set holds at most ${MAX_EVAL_EXAMPLES}`);
        } catch (err) {
          if (!(err instanceof EvalLineError)) throw err;
          problem(err.reason);
        }
      }
    }
    start = end + 1;
    if (Date.now() - sliceStart > PARSE_SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = Date.now();
    }
  }
  if (bad > 0) {
    const issues: ValidationIssue[] = problems.map((p) => ({
      loc: ['body', 'file'],
      msg: `Value error, line ${p.line}: ${p.reason}`,
      type: 'value_error',
    }));
    if (bad > problems.length)
      issues.push({
        loc: ['body', 'file'],
        msg: `Value error, ${bad - problems.length} more bad lines not listed`,
        type: 'value_error',
      });
    throw ApiError.validation(issues);
  }
  if (examples.length === 0) throw ApiError.valueError(['body', 'file'], 'The eval set has no examples');
  return examples;
}

async function requireEvalSet(principal: Principal, id: string) {
  const row = await evalsRepo.findEvalSetInScope(await getDb(), id, accessibleEntityIds(principal));
  if (!row) throw ApiError.notFound(EVAL_SET_NOT_FOUND);
  return row;
}

export async function getEvalSet(principal: Principal, id: string): Promise<EvalSetDto> {
  return toSetDto(await requireEvalSet(principal, id));
}

/** A cursor of the newest-first lists: the id of the last item, checked to lie in the caller's scope. */
async function listCursor(
  after: string | undefined,
  find: (id: string) => Promise<{ createdAt: Date; id: string } | undefined>,
) {
  if (after === undefined) return undefined;
  const row = /^[0-9a-f-]{36}$/i.test(after) ? await find(after) : undefined;
  if (!row) throw ApiError.valueError(['query', 'after'], 'Unknown cursor', after);
  return { createdAt: row.createdAt, id: row.id };
}

function page<T>(rows: T[], limit: number, cursorOf: (row: T) => string) {
  const data = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return {
    object: 'list' as const,
    data,
    has_more: hasMore,
    ...(hasMore && data.length ? { next_cursor: cursorOf(data[data.length - 1]) } : {}),
  };
}

export async function listEvalSets(
  principal: Principal,
  q: { entity?: string; project?: string; name?: string; after?: string; limit: number },
) {
  const db = await getDb();
  const entityIds = listScope(principal, q.entity);
  const after = await listCursor(q.after, (id) => evalsRepo.findEvalSetInScope(db, id, entityIds));
  const rows = await evalsRepo.listEvalSets(db, {
    entityIds,
    project: q.project,
    name: q.name,
    after,
    limit: q.limit + 1,
  });
  const out = page(rows, q.limit, (r) => r.id);
  return { ...out, data: out.data.map(toSetDto) };
}

function toExampleDto(row: evalsRepo.EvalExampleRow): EvalExampleDto {
  return {
    index: row.idx,
    messages: row.messages as EvalExampleDto['messages'],
    reference: row.reference === null ? null : (JSON.parse(row.reference) as unknown),
    metadata: row.metadata,
  };
}

export async function listEvalExamples(principal: Principal, id: string, q: { after?: number; limit: number }) {
  const set = await requireEvalSet(principal, id);
  const rows = await evalsRepo.pageExamples(await getDb(), set.id, q.after ?? -1, q.limit + 1);
  const out = page(rows, q.limit, (r) => String(r.idx));
  return { ...out, data: out.data.map(toExampleDto) };
}

export async function deleteEvalSet(principal: Principal, id: string): Promise<void> {
  const set = await requireEvalSet(principal, id);
  requirePermission(principal, set.entityId, 'delete_eval_sets');
  const outcome = await evalsRepo.deleteEvalSet(await getDb(), set.id);
  if (outcome === 'missing') throw ApiError.notFound(EVAL_SET_NOT_FOUND);
  if (outcome === 'busy')
    throw new ApiError('conflict', 'An eval run that is QUEUED or RUNNING uses this eval set: cancel it first');
}

// ---------------------------------------------------------------------------------------------------------------
// Checks shared by runs and auto-eval

/** The sampling a run uses: the defaults under what was asked, checked like a chat request's fields. */
function checkSampling(sampling: EvalSampling | undefined, loc: (string | number)[]): Record<string, unknown> {
  const merged = { ...DEFAULT_EVAL_SAMPLING, ...(sampling ?? {}) };
  try {
    parseChatRequest({ model: 'eval', messages: [{ role: 'user', content: 'x' }], ...merged });
  } catch (err) {
    if (err instanceof ApiError) throw ApiError.valueError(loc, `sampling: ${err.message}`);
    throw err;
  }
  return merged;
}

/** Resolves a model name as chat would; a 422 naming `what` when it does not exist for this caller. */
async function resolveModelName(principal: Principal, name: string, loc: (string | number)[], what: string) {
  try {
    return await resolveChatModel(principal, name);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404)
      throw ApiError.valueError(loc, `${what}: the model '${name}' does not exist`, name);
    throw err;
  }
}

/** Scorers compiled and checked, judge models resolved; the form a run stores. */
async function checkScorers(principal: Principal, scorers: ScorerInput[], loc: (string | number)[]) {
  const compiled = compileScorers(scorers, loc);
  for (const [i, s] of compiled.entries()) {
    if (s.judge) await resolveModelName(principal, s.judge.model, [...loc, i, 'model'], `scorer ${i} (${s.name})`);
  }
  return compiled;
}

// ---------------------------------------------------------------------------------------------------------------
// Eval runs

export function toRunDto(row: evalsRepo.EvalRunWithSet): EvalRunDto {
  return {
    object: 'eval_run',
    id: row.id,
    eval_set_id: row.evalSetId,
    eval_set: { name: row.setName, version: row.setVersion, project: row.setProject },
    name: row.name,
    status: row.status,
    error: row.error,
    targets: row.targets,
    scorers: row.scorers as StoredScorer[],
    sampling: row.sampling,
    n: row.n,
    progress: { done: row.progressDone, total: row.progressTotal },
    summary: row.summary,
    created_at: row.createdAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
  };
}

export async function createEvalRun(principal: Principal, body: CreateEvalRunBody): Promise<EvalRunDto> {
  const set = await requireEvalSet(principal, body.eval_set_id);
  const compiled = await checkScorers(principal, body.scorers, ['body', 'scorers']);
  const sampling = checkSampling(body.sampling, ['body', 'sampling']);
  const targets: { name: string; model_id: string | null; step: number | null }[] = [];
  for (const [i, name] of body.targets.entries()) {
    const served = await resolveModelName(principal, name, ['body', 'targets', i], `target ${i}`);
    const canonical = served.usageName;
    if (targets.some((t) => t.name === canonical))
      throw ApiError.valueError(['body', 'targets', i], `target ${i}: '${canonical}' is listed twice`, name);
    targets.push({
      name: canonical,
      model_id: served.checkpoint?.modelId ?? null,
      step: served.checkpoint?.step ?? null,
    });
  }
  const n = body.n ?? 1;
  const db = await getDb();
  const run = await db.transaction(async (tx) => {
    // Shares the set's lock with its deletion: a set deleted meanwhile is a 404 here, never a run without its set.
    if (!(await evalsRepo.lockEvalSet(tx, set.id))) throw ApiError.notFound(EVAL_SET_NOT_FOUND);
    return evalsRepo.insertEvalRun(tx, {
      entityId: set.entityId,
      evalSetId: set.id,
      name: body.name ?? null,
      targets,
      scorers: compiled.map((s) => s.stored),
      sampling,
      n,
      progressTotal: set.numExamples * targets.length * n,
      createdBy: principal.userId,
    });
  });
  await wakeEvalRunner(run.id);
  return toRunDto({ ...run, setName: set.name, setVersion: set.version, setProject: set.project });
}

async function requireEvalRun(principal: Principal, id: string) {
  const row = await evalsRepo.findEvalRunInScope(await getDb(), id, accessibleEntityIds(principal));
  if (!row) throw ApiError.notFound(EVAL_RUN_NOT_FOUND);
  return row;
}

export async function getEvalRun(principal: Principal, id: string): Promise<EvalRunDto> {
  return toRunDto(await requireEvalRun(principal, id));
}

export async function listEvalRuns(
  principal: Principal,
  q: { entity?: string; eval_set_id?: string; model_id?: string; project?: string; after?: string; limit: number },
) {
  const db = await getDb();
  const entityIds = listScope(principal, q.entity);
  const after = await listCursor(q.after, (id) => evalsRepo.findEvalRunInScope(db, id, entityIds));
  const rows = await evalsRepo.listEvalRuns(db, {
    entityIds,
    evalSetId: q.eval_set_id,
    modelId: q.model_id,
    project: q.project,
    after,
    limit: q.limit + 1,
  });
  const out = page(rows, q.limit, (r) => r.id);
  return { ...out, data: out.data.map(toRunDto) };
}

/** Cancels a QUEUED or RUNNING run: it stops promptly and keeps the samples it finished (idempotent). */
export async function cancelEvalRun(principal: Principal, id: string): Promise<EvalRunDto> {
  const run = await requireEvalRun(principal, id);
  if (run.status === 'COMPLETED' || run.status === 'FAILED')
    throw new ApiError('conflict', `The eval run is already ${run.status}`);
  if (run.status !== 'CANCELLED') {
    const db = await getDb();
    await db.transaction(async (tx) => {
      const updated = await evalsRepo.updateEvalRun(
        tx,
        run.id,
        { status: 'CANCELLED', finishedAt: new Date(), leaseOwner: null, leaseExpiresAt: null },
        { status: ['QUEUED', 'RUNNING'] },
      );
      if (updated) await evalsRepo.insertEvalEvent(tx, run.id, 'eval_cancelled', 'Cancelled', {});
    });
    // This process stops at once; another process running it sees the status at its next lease renewal (≤ 1 s).
    abortLocalRun(run.id);
    await refreshSummary(run.id);
  }
  return getEvalRun(principal, id);
}

export async function listEvalEvents(principal: Principal, id: string, q: { after?: number; limit: number }) {
  const run = await requireEvalRun(principal, id);
  const rows = await evalsRepo.pageEvalEvents(await getDb(), run.id, q.after ?? 0, q.limit + 1);
  const out = page(rows, q.limit, (r) => String(r.seq));
  return {
    ...out,
    data: out.data.map((e) => ({
      id: String(e.seq),
      type: e.type as 'eval_started',
      message: e.message,
      data: e.data,
      created_at: e.createdAt.toISOString(),
    })),
  };
}

function targetIndex(run: evalsRepo.EvalRunRow, name: string): number {
  return run.targets.findIndex((t) => t.name === name);
}

export async function listEvalResults(
  principal: Principal,
  id: string,
  q: { after?: number; limit: number; filter?: 'regressed' | 'improved' | 'changed'; a?: string; b?: string },
) {
  const run = await requireEvalRun(principal, id);
  const db = await getDb();
  const after = q.after ?? -1;
  let idxs: number[];
  if (q.filter) {
    const names = run.targets.map((t) => t.name).join(', ');
    const issues: ValidationIssue[] = [];
    const pick = (key: 'a' | 'b') => {
      const value = q[key];
      if (value === undefined) {
        issues.push({
          loc: ['query', key],
          msg: `Field required: filter=${q.filter} compares targets a and b`,
          type: 'missing',
        });
        return -1;
      }
      const i = targetIndex(run, value);
      if (i < 0)
        issues.push({
          loc: ['query', key],
          msg: `Value error, '${value}' is not a target of this run (${names})`,
          type: 'value_error',
        });
      return i;
    };
    const a = pick('a');
    const b = pick('b');
    if (issues.length) throw ApiError.validation(issues);
    idxs = await evalsRepo.filteredExampleIdxs(db, run.id, { a, b, filter: q.filter, after, limit: q.limit + 1 });
  } else {
    idxs = (await evalsRepo.pageExamples(db, run.evalSetId, after, q.limit + 1)).map((e) => e.idx);
  }
  const shown = idxs.slice(0, q.limit);
  const [examples, results] = await Promise.all([
    evalsRepo.examplesAt(db, run.evalSetId, shown),
    evalsRepo.resultsOfExamples(db, run.id, shown),
  ]);
  const byExample = new Map<number, EvalResultRowDto['outputs']>();
  for (const r of results) {
    const outputs = byExample.get(r.exampleIdx) ?? [];
    outputs.push({
      target: run.targets[r.targetIdx]?.name ?? `#${r.targetIdx}`,
      sample: r.sample,
      text: r.text,
      finish_reason: r.finishReason,
      error: r.error,
      scores: r.scores,
    });
    byExample.set(r.exampleIdx, outputs);
  }
  const rows: EvalResultRowDto[] = examples.map((e) => ({ ...toExampleDto(e), outputs: byExample.get(e.idx) ?? [] }));
  const hasMore = idxs.length > q.limit;
  return {
    object: 'list' as const,
    data: rows,
    has_more: hasMore,
    ...(hasMore && rows.length ? { next_cursor: String(rows[rows.length - 1].index) } : {}),
  };
}

/** The run's summary recomputed from its stored scores (after samples or client scores were added). */
export async function refreshSummary(runId: string) {
  const db = await getDb();
  const run = await evalsRepo.findEvalRun(db, runId);
  if (!run) return undefined;
  const rows = await evalsRepo.summarizeEvalRun(db, runId);
  const summary = rows
    .filter((r) => run.targets[r.targetIdx])
    .map((r) => ({
      target: run.targets[r.targetIdx].name,
      scorer: r.scorer,
      mean: r.mean,
      passed: r.passed,
      total: r.total,
    }));
  await evalsRepo.updateEvalRun(db, runId, { summary });
  return { ...run, summary };
}

/**
 * `eval/<set>/<scorer>` = the mean score, on each target that is a trained model's checkpoint, at its step: in the
 * checkpoint's metrics and in the model's checkpoints history with its rollups (upsertRunMetrics), so the model page
 * and /compare chart it beside train/loss. A later run of the same set and scorer at that step overwrites it.
 */
export async function writeEvalMetrics(run: evalsRepo.EvalRunWithSet, tx?: DbOrTx): Promise<void> {
  if (!tx) {
    const db = await getDb();
    return db.transaction((t) => writeEvalMetrics(run, t));
  }
  for (const target of run.targets) {
    if (!target.model_id || target.step === null) continue;
    const metrics: Record<string, number> = {};
    for (const row of run.summary) {
      if (row.target === target.name && row.total > 0) metrics[`eval/${run.setName}/${row.scorer}`] = row.mean;
    }
    if (Object.keys(metrics).length === 0) continue;
    const model = await modelsRepo.findModelById(tx, target.model_id!);
    const checkpoint = model && (await modelsRepo.findCheckpointByStep(tx, model.id, target.step!));
    // The checkpoint (or its model) was deleted since: nothing to chart it on.
    if (!model || !checkpoint) continue;
    await modelsRepo.mergeCheckpointMetrics(tx, checkpoint.id, metrics);
    await upsertRunMetrics(tx, model.runId, target.step!, metrics);
  }
}

export async function postClientScores(principal: Principal, id: string, body: ClientScoresBody): Promise<EvalRunDto> {
  const run = await requireEvalRun(principal, id);
  const existing = (run.scorers as StoredScorer[]).find((s) => s.name === body.scorer);
  if (existing && existing.type !== 'client')
    throw ApiError.valueError(
      ['body', 'scorer'],
      `'${body.scorer}' is a ${existing.type} scorer of this run: name client scores differently`,
      body.scorer,
    );
  const db = await getDb();
  const set = await evalsRepo.findEvalSetInScope(db, run.evalSetId, [run.entityId]);
  const numExamples = set?.numExamples ?? 0;
  const issues: ValidationIssue[] = [];
  const rows: Parameters<typeof evalsRepo.mergeScores>[2] = [];
  const names = run.targets.map((t) => t.name).join(', ');
  body.scores.forEach((s, i) => {
    const at = ['body', 'scores', i];
    const problem = (field: string, msg: string, input: unknown) =>
      issues.length < 20 &&
      issues.push({ loc: [...at, field], msg: `Value error, ${msg}`, type: 'value_error', input });
    const targetIdx = targetIndex(run, s.target);
    const sample = s.sample ?? 0;
    if (!(s.score >= 0 && s.score <= 1)) problem('score', `score ${i}: must be between 0 and 1`, s.score);
    if (s.index >= numExamples)
      problem('index', `score ${i}: the eval set has ${numExamples} examples (indexes 0-${numExamples - 1})`, s.index);
    if (targetIdx < 0) problem('target', `score ${i}: '${s.target}' is not a target of this run (${names})`, s.target);
    if (sample >= run.n)
      problem('sample', `score ${i}: the run has ${run.n} samples per example (0-${run.n - 1})`, sample);
    const value: EvalScoreValue = {
      score: s.score,
      passed: s.score >= PASS_THRESHOLD,
      ...(s.comment !== undefined ? { comment: s.comment } : {}),
    };
    rows.push({ exampleIdx: s.index, targetIdx, sample, scores: { [body.scorer]: value } });
  });
  if (issues.length) throw ApiError.validation(issues);
  await evalsRepo.mergeScores(db, run.id, rows);
  if (!existing)
    await evalsRepo.updateEvalRun(db, run.id, { scorers: [...run.scorers, { type: 'client', name: body.scorer }] });
  const updated = await refreshSummary(run.id);
  if (updated && updated.status === 'COMPLETED') await writeEvalMetrics(updated);
  return getEvalRun(principal, id);
}

// ---------------------------------------------------------------------------------------------------------------
// Auto-eval

/** Checks an auto-eval setting as run creation would (set in scope, scorers, judges, sampling). */
export async function prepareAutoEval(
  principal: Principal,
  body: AutoEvalBody,
  loc: (string | number)[],
): Promise<AutoEvalSetting> {
  const set = await evalsRepo.findEvalSetInScope(await getDb(), body.eval_set_id, accessibleEntityIds(principal));
  if (!set) throw ApiError.valueError([...loc, 'eval_set_id'], EVAL_SET_NOT_FOUND, body.eval_set_id);
  const compiled: CompiledScorer[] = await checkScorers(principal, body.scorers, [...loc, 'scorers']);
  return {
    eval_set_id: set.id,
    scorers: compiled.map((s) => s.stored),
    sampling: checkSampling(body.sampling, [...loc, 'sampling']),
    n: body.n ?? 1,
    created_by: principal.userId,
  };
}

export async function storeAutoEval(modelId: string, setting: AutoEvalSetting | null) {
  await evalsRepo.setAutoEval(await getDb(), modelId, setting);
}

export async function getAutoEval(principal: Principal, modelId: string) {
  const model = await requireModel(principal, modelId);
  return { auto_eval: autoEvalDto(await evalsRepo.getAutoEval(await getDb(), model.id)) };
}

export async function putAutoEval(principal: Principal, modelId: string, body: AutoEvalBody | null) {
  const model = await requireModel(principal, modelId);
  const setting = body === null ? null : await prepareAutoEval(principal, body, ['body']);
  await storeAutoEval(model.id, setting);
  return { auto_eval: autoEvalDto(setting) };
}

/** The model object's `auto_eval` (GET /v1/preview/models/{id}). */
export async function modelAutoEval(modelId: string) {
  return autoEvalDto(await evalsRepo.getAutoEval(await getDb(), modelId));
}
