import 'server-only';
import { ApiError } from '@/lib/errors';
import { getDb, type DbOrTx } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import type { ModelWithNames } from '@/lib/db/repositories/models';
import * as runMetricsRepo from '@/lib/db/repositories/run-metrics';
import * as trainingRepo from '@/lib/db/repositories/training';
import type { TrainingJobRow } from '@/lib/db/repositories/training';
import {
  COMPARE_MAX_MODELS,
  COMPARE_MIN_MODELS,
  type CompareCurves,
  type CompareCurvesQuery,
  type CompareQuery,
  type CompareRun,
  type Comparison,
} from '@/lib/schemas/comparison';
import { metricDirection } from '@/lib/schemas/metric-direction';
import { accessibleEntityIds, listScope, type Principal } from './accounts';
import { getHistory } from './run-history';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Keys of a job's stored configuration that describe the bookkeeping around it rather than how it trained: the
 * run table would otherwise mark every pair of runs as differing in their dataset's storage key.
 */
const NOT_CONFIG = new Set([
  'dataset_key',
  'training_data_url',
  'resubmitted_from',
  'input_job_id',
  'ignored_settings',
  'extra_settings',
  'num_groups',
]);

/**
 * Two to eight models side by side: each one's latest configuration, status, duration and the final and best value
 * of every series of its training curve. The curves themselves come from each model's history (axis=gradient_step).
 */
/**
 * The models named by a `model_ids` query (comma-separated, 2 to 8, each once), in that order; each problem is a 422
 * naming the parameter, and a model the caller cannot see reads as one that does not exist.
 */
async function modelsByIds(db: DbOrTx, principal: Principal, modelIds: string): Promise<ModelWithNames[]> {
  const ids = modelIds
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = ids.find((id) => !UUID.test(id));
  if (bad !== undefined) throw ApiError.valueError(['query', 'model_ids'], `${bad} is not a model id`, bad);
  if (new Set(ids.map((id) => id.toLowerCase())).size !== ids.length)
    throw ApiError.valueError(['query', 'model_ids'], 'a model is listed twice');
  if (ids.length < COMPARE_MIN_MODELS || ids.length > COMPARE_MAX_MODELS)
    throw ApiError.valueError(
      ['query', 'model_ids'],
      `compare ${COMPARE_MIN_MODELS} to ${COMPARE_MAX_MODELS} models (got ${ids.length})`,
    );
  const scope = accessibleEntityIds(principal);
  const chosen: ModelWithNames[] = [];
  for (const id of ids) {
    const model = await modelsRepo.findModelInScope(db, id, scope);
    // The same answer for a model that does not exist and one the caller may not see.
    if (!model) throw ApiError.valueError(['query', 'model_ids'], `no model ${id}`, id);
    chosen.push(model);
  }
  return chosen;
}

/**
 * Every compared model's training curve in one answer: what the comparison page draws. One request instead of one
 * per run, because a browser opens at most six connections to a host and the seventh and eighth curves waited for
 * the first ones (bench:ui), and each request paid its own authentication and model lookup.
 */
export async function compareCurves(principal: Principal, q: CompareCurvesQuery): Promise<CompareCurves> {
  const models = await modelsByIds(await getDb(), principal, q.model_ids);
  // All at once: the database answers them over its pipelined connections (PGlite: lib/db/README.md) while this
  // thread shapes the answers that are in; one after another took twice as long (bench:ui).
  const runs = await Promise.all(
    models.map(async (model) => ({
      model_id: model.id,
      ...(await getHistory(principal, model.id, { axis: 'gradient_step', max_points: q.max_points })),
    })),
  );
  return { object: 'comparison.curves', runs };
}

export async function compareRuns(principal: Principal, q: CompareQuery): Promise<Comparison> {
  const db = await getDb();
  if ((q.model_ids === undefined) === (q.project === undefined))
    throw ApiError.valueError(['query'], 'give either model_ids or project');
  if (q.entity !== undefined && q.project === undefined)
    throw ApiError.valueError(['query', 'entity'], 'entity goes with project');
  let chosen: ModelWithNames[];
  let omitted = 0;
  if (q.model_ids !== undefined) {
    chosen = await modelsByIds(db, principal, q.model_ids);
  } else {
    const scope = listScope(principal, q.entity);
    if (q.entity !== undefined && scope.length === 0)
      throw ApiError.valueError(['query', 'entity'], `no team or user named ${q.entity}`, q.entity);
    const rows = await modelsRepo.listModels(db, { entityIds: scope, project: q.project, limit: 200 });
    if (rows.length < COMPARE_MIN_MODELS)
      throw ApiError.valueError(
        ['query', 'project'],
        `project ${q.project} has ${rows.length} model${rows.length === 1 ? '' : 's'}; comparing needs at least ${COMPARE_MIN_MODELS}`,
        q.project,
      );
    // Newest first from the list; drawn oldest first, as a project grew.
    chosen = rows.slice(0, COMPARE_MAX_MODELS).reverse();
    omitted = Math.max(0, rows.length - COMPARE_MAX_MODELS);
  }

  const jobs = await trainingRepo.jobsOfModels(
    db,
    chosen.map((m) => m.id),
  );
  const now = Date.now();
  const runs: CompareRun[] = [];
  for (const model of chosen) {
    const own = jobs.filter((j) => j.modelId === model.id);
    const latest = own.at(-1);
    const runId = modelsRepo.gradientRunId(model.id);
    const [summaries, extremes] = await Promise.all([
      runMetricsRepo.seriesSummaries(db, runId),
      runMetricsRepo.seriesExtremes(db, runId),
    ]);
    const started = own.flatMap((j) => (j.startedAt ? [j.startedAt.getTime()] : []));
    const ran = own.filter((j) => j.startedAt);
    runs.push({
      model_id: model.id,
      name: model.name,
      entity: model.entityName,
      project: model.projectName,
      base_model: model.baseModel,
      status: latest?.status ?? null,
      jobs: own.length,
      // The curve's last x (the model row as scoped here does not carry its counter).
      gradient_steps: summaries.reduce((max, s) => Math.max(max, s.lastStep), 0),
      started_at: started.length ? new Date(Math.min(...started)).toISOString() : null,
      finished_at: latest?.finishedAt?.toISOString() ?? null,
      duration_s: ran.length
        ? ran.reduce((sum, j) => sum + ((j.finishedAt?.getTime() ?? now) - j.startedAt!.getTime()) / 1000, 0)
        : null,
      config: { base_model: model.baseModel, ...(latest ? flattenConfig(latest) : {}) },
      metrics: summaries.map((s) => {
        const direction = metricDirection(s.name);
        const e = extremes.get(s.name);
        return {
          name: s.name,
          final: s.lastValue,
          best: e ? (direction === 'min' ? e.min : e.max) : s.lastValue,
          direction,
        };
      }),
    });
  }
  return { object: 'comparison', runs, omitted };
}

/** A job's configuration as flat `key → scalar` pairs: `lora: { rank: 16 }` becomes `lora_rank: 16`. */
export function flattenConfig(
  job: Pick<TrainingJobRow, 'kind' | 'config'>,
): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = { kind: job.kind };
  const put = (key: string, value: unknown) => {
    if (value === undefined) return;
    if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      out[key] = value;
    else out[key] = JSON.stringify(value);
  };
  for (const [key, value] of Object.entries(job.config)) {
    if (NOT_CONFIG.has(key)) continue;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, v] of Object.entries(value as Record<string, unknown>))
        put(inner.startsWith(`${key}_`) ? inner : `${key}_${inner}`, v);
    } else put(key, value);
  }
  return out;
}
