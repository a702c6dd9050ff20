import 'server-only';
import { ApiError } from '@/lib/errors';
import { getDb, type DbOrTx } from '@/lib/db/client';
import * as logSumsRepo from '@/lib/db/repositories/log-metric-sums';
import * as modelsRepo from '@/lib/db/repositories/models';
import { upsertRunMetrics } from '@/lib/db/repositories/run-metrics';
import * as trainingRepo from '@/lib/db/repositories/training';
import type { ModelWithNames } from '@/lib/db/repositories/models';
import { toList } from '@/lib/schemas/common';
import type { TrajectoryGroup } from '@/lib/schemas/trajectory-input';
import type { PreparedGroup, PreparedLogBody } from '@/lib/body/prepared';
import type { Principal } from './accounts';
import { requireModel } from './models';
import {
  addCompletions,
  addToSums,
  checkPooledSums,
  metricsFromSums,
  prefixKeys,
  sumsFromJson,
} from './trajectory-metrics';

function groupSummary(group: TrajectoryGroup) {
  // Unscored trajectories (no reward) count as trajectories, never as a reward of 0.
  const rewards = group.trajectories.flatMap((t) => (typeof t.reward === 'number' ? [t.reward] : []));
  return {
    numTrajectories: group.trajectories.length,
    rewardMean: rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null,
    rewardMin: rewards.length ? Math.min(...rewards) : null,
    rewardMax: rewards.length ? Math.max(...rewards) : null,
    rewards: rewards.filter(Number.isFinite),
  };
}

/**
 * Stores groups for browsing and writes `{split}/…` metrics onto the checkpoint that is latest now,
 * plus the run history at that step. Used by /log and by RL job creation (split "train").
 */
export async function recordTrajectories(
  tx: DbOrTx,
  model: ModelWithNames,
  input: { split: string; groups: PreparedGroup[]; source: 'log' | 'train'; jobId?: string },
): Promise<{ step: number; metrics: Record<string, number> }> {
  const latest = await modelsRepo.latestCheckpoint(tx, model.id);
  // With every checkpoint deleted there is nothing to merge into; the run history still records the values.
  const step = latest?.step ?? model.lastStep;
  if (input.groups.length === 0) return { step, metrics: {} };
  // Every log to this step and split adds to one pool: the stored metrics describe all of its trajectories.
  const key = { modelId: model.id, step, split: input.split };
  const sums = addCompletions(
    addToSums(
      sumsFromJson(await logSumsRepo.lockLogMetricSums(tx, key)),
      input.groups.map((g) => g.light),
    ),
    input.groups.map((g) => g.completions),
  );
  checkPooledSums(sums, input.split);
  await logSumsRepo.saveLogMetricSums(tx, key, sums);
  const metrics = prefixKeys(metricsFromSums(sums), input.split);
  if (latest) await modelsRepo.mergeCheckpointMetrics(tx, latest.id, metrics);
  await upsertRunMetrics(tx, model.runId, step, metrics);
  await trainingRepo.insertTrajectoryGroups(
    tx,
    input.groups.map((group, groupIndex) => ({
      modelId: model.id,
      jobId: input.jobId ?? null,
      source: input.source,
      split: input.split,
      step,
      groupIndex,
      ...groupSummary(group.light),
      dataJson: group.json,
    })),
  );
  return { step, metrics };
}

/** A /log body, parsed and split for storage by lib/body (off the request thread when it is large). */
export async function logTrajectories(principal: Principal, modelId: string, body: PreparedLogBody) {
  const db = await getDb();
  const model = await requireModel(principal, modelId);
  const result = await db.transaction((tx) =>
    recordTrajectories(tx, model, { split: body.split, groups: body.groups, source: 'log' }),
  );
  return { success: true as const, ...result };
}

export async function listTrajectoryGroups(
  principal: Principal,
  modelId: string,
  q: { step?: number; split?: string; source?: 'log' | 'train'; after?: string; limit: number },
) {
  const db = await getDb();
  const model = await requireModel(principal, modelId);
  let afterSeq: number | undefined;
  if (q.after !== undefined) {
    const cursor = /^[0-9a-f-]{36}$/i.test(q.after)
      ? await trainingRepo.findTrajectoryGroupSeq(db, model.id, q.after)
      : undefined;
    if (!cursor) throw ApiError.valueError(['query', 'after'], 'Unknown cursor', q.after);
    afterSeq = cursor.seq;
  }
  const rows = await trainingRepo.listTrajectoryGroups(db, model.id, { ...q, afterSeq, limit: q.limit + 1 });
  const data = rows.slice(0, q.limit).map((r) => ({
    id: r.id,
    step: r.step,
    split: r.split,
    source: r.source,
    job_id: r.jobId,
    group_index: r.groupIndex,
    num_trajectories: r.numTrajectories,
    reward_mean: r.rewardMean,
    reward_min: r.rewardMin,
    reward_max: r.rewardMax,
    created_at: r.createdAt.toISOString(),
    group: r.data,
  }));
  return toList(data, rows.length > q.limit);
}
