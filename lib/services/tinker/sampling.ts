import 'server-only';
import { ApiError } from '@/lib/errors';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import * as repo from '@/lib/db/repositories/tinker';
import { componentLogger } from '@/lib/logger';
import type { SampleResult } from '@/lib/tinker/types';
import { accessibleEntityIds, type Principal } from '../accounts';
import { findBaseModel } from '@/lib/catalog/base-models';
import { recordUsage } from '../usage';
import {
  checkSampleRequest,
  describeSampleTarget,
  sampleTokens,
  type SampleTarget,
  type TinkerSamplingParams,
} from './sampler';
import { isUuid } from './training';
import { resolveWeights } from './weights';
import { requestKey, wake } from '@/lib/jobs/server/tinker-wakeups';

const log = componentLogger('tinker');

/**
 * Tinker sampling clients (docs/tinker.md §2.2): a sampling session names what `asample` samples from — a base model
 * or sampler weights (a checkpoint of a model) — and each asample is a future the server itself runs, on the engine
 * that serves that model to /v1/chat/completions (lib/services/tinker/sampler.ts).
 */

/** Sampling runs in this process; its id marks the rows, so a restarted server knows which it abandoned. */
export const SERVER_RUNNER = `server:${process.pid}:${Date.now().toString(36)}`;

async function requireSession(principal: Principal, sessionId: string) {
  const session = isUuid(sessionId) ? await repo.findSession(await getDb(), sessionId) : undefined;
  if (!session || !accessibleEntityIds(principal).includes(session.entityId))
    throw ApiError.notFound('Session not found');
  if (session.endedAt) throw new ApiError('bad_request', `Session ${sessionId} has ended; create a new ServiceClient`);
  return session;
}

/** What a sampling session samples from: checked now, so that a bad path fails at creation, not at the first sample. */
async function resolveTarget(principal: Principal, input: { base_model?: string | null; model_path?: string | null }) {
  if (input.model_path) {
    const { parsed, client, row } = await resolveWeights(principal, input.model_path);
    if (parsed.kind !== 'sampler' || !row.checkpointId) {
      throw new ApiError(
        'bad_request',
        `${input.model_path} is a training state; save the weights for sampling (save_weights_for_sampler) and sample from that path`,
      );
    }
    if (input.base_model && input.base_model !== client.baseModel) {
      throw new ApiError(
        'bad_request',
        `${input.model_path} holds weights of ${client.baseModel}, not ${input.base_model}`,
      );
    }
    return {
      baseModel: client.baseModel,
      modelId: client.modelId,
      checkpointId: row.checkpointId,
      modelPath: input.model_path,
    };
  }
  if (!input.base_model) throw new ApiError('bad_request', 'Give base_model or model_path to sample from');
  if (!findBaseModel(input.base_model)) throw ApiError.notFound(`Unknown base model ${input.base_model}`);
  return { baseModel: input.base_model, modelId: null, checkpointId: null, modelPath: null };
}

export async function createSamplingSession(
  principal: Principal,
  body: { session_id: string; sampling_session_seq_id: number; base_model?: string | null; model_path?: string | null },
) {
  const db = await getDb();
  const session = await requireSession(principal, body.session_id);
  const existing = await repo.findSamplingSessionBySeq(db, session.id, body.sampling_session_seq_id);
  if (existing) return { type: 'create_sampling_session' as const, sampling_session_id: existing.id };
  const target = await resolveTarget(principal, body);
  await describeSampleTarget(await sampleTargetOf(target));
  const row =
    (await repo.insertSamplingSession(db, {
      sessionId: session.id,
      seq: body.sampling_session_seq_id,
      entityId: session.entityId,
      ...target,
    })) ?? (await repo.findSamplingSessionBySeq(db, session.id, body.sampling_session_seq_id));
  if (!row) throw new Error('sampling session was not stored');
  return { type: 'create_sampling_session' as const, sampling_session_id: row.id };
}

async function requireSamplingSession(principal: Principal, id: string) {
  const row = isUuid(id) ? await repo.findSamplingSession(await getDb(), id) : undefined;
  if (!row || !accessibleEntityIds(principal).includes(row.entityId))
    throw ApiError.notFound('Sampling session not found');
  return row;
}

export async function getSampler(principal: Principal, id: string) {
  const row = await requireSamplingSession(principal, id);
  return { sampler_id: row.id, base_model: row.baseModel, model_path: row.modelPath };
}

async function sampleTargetOf(t: {
  baseModel: string;
  modelId: string | null;
  checkpointId: string | null;
  modelPath?: string | null;
}): Promise<SampleTarget> {
  if (!t.modelId) return { baseModel: t.baseModel, checkpoint: null };
  if (!t.checkpointId) {
    throw new ApiError(
      'bad_request',
      `The weights of this sampling client (${t.modelPath ?? 'unnamed'}) were deleted: unnamed saves keep only the 3 latest per training client; save with a name to keep them`,
    );
  }
  const checkpoint = await modelsRepo.findCheckpoint(await getDb(), t.modelId, t.checkpointId);
  if (!checkpoint)
    throw new ApiError('bad_request', `The weights of this sampling client (${t.modelPath}) were deleted`);
  return {
    baseModel: t.baseModel,
    checkpoint: { id: checkpoint.id, step: checkpoint.step, artifactKey: checkpoint.artifactKey },
  };
}

export interface SampleBody {
  prompt: number[];
  num_samples: number;
  sampling_params: TinkerSamplingParams;
  prompt_logprobs?: boolean | null;
  topk_prompt_logprobs?: number;
  sampling_session_id?: string | null;
  seq_id?: number | null;
  base_model?: string | null;
  model_path?: string | null;
}

/**
 * asample: checks the request against its target at once (a bad prompt is a 400, not a failed future), stores the
 * future and runs the sampling in the background; a resent request (same sampling session and seq_id, or idempotency
 * key) answers the first one's future.
 */
export async function submitSample(principal: Principal, body: SampleBody, idempotencyKey: string | null) {
  const db = await getDb();
  let sessionRow: repo.SamplingSessionRow | null = null;
  let target;
  let entityId: string;
  if (body.sampling_session_id) {
    sessionRow = await requireSamplingSession(principal, body.sampling_session_id);
    target = sessionRow;
    entityId = sessionRow.entityId;
  } else {
    target = await resolveTarget(principal, body);
    entityId = principal.personalEntity.id;
  }
  const seqId = sessionRow && body.seq_id !== undefined && body.seq_id !== null ? body.seq_id : null;
  const duplicate = await repo.findDuplicateRequest(db, {
    entityId,
    idempotencyKey,
    samplingSessionId: sessionRow?.id ?? null,
    seqId,
  });
  if (duplicate) return { request_id: duplicate.id, model_id: duplicate.modelId ?? null };
  const sampleTarget = await sampleTargetOf(target);
  // Every check the sampling makes, now: a bad prompt is the submission's 400, not a failed future.
  await checkSampleRequest({
    target: sampleTarget,
    prompt: body.prompt,
    numSamples: body.num_samples,
    params: body.sampling_params,
    promptLogprobs: Boolean(body.prompt_logprobs),
    topkPromptLogprobs: body.topk_prompt_logprobs ?? 0,
  });
  const row =
    (await repo.insertRequest(db, {
      entityId,
      modelId: null,
      samplingSessionId: sessionRow?.id ?? null,
      seqId,
      kind: 'sample',
      idempotencyKey,
      status: 'running',
      workerId: SERVER_RUNNER,
      startedAt: new Date(),
    })) ??
    (await repo.findDuplicateRequest(db, {
      entityId,
      idempotencyKey,
      samplingSessionId: sessionRow?.id ?? null,
      seqId,
    }));
  if (!row) throw new Error('sample request was not stored');
  if (row.status === 'running' && row.workerId === SERVER_RUNNER && row.startedAt) {
    void runSample(row.id, sampleTarget, body, () => usageOf(sessionRow, sampleTarget, target, entityId));
  }
  return { request_id: row.id, model_id: null };
}

/**
 * Where the tokens of a sample are counted (Settings → Usage, as chat's are): a checkpoint's under its model's
 * entity, project and `entity/project/name:stepN`; a base model's under the sampling session's project.
 */
async function usageOf(
  session: repo.SamplingSessionRow | null,
  sampleTarget: SampleTarget,
  target: { baseModel: string; modelId: string | null },
  entityId: string,
): Promise<Usage> {
  const db = await getDb();
  if (target.modelId && sampleTarget.checkpoint) {
    const client = await repo.findTrainingClient(db, target.modelId);
    if (client) {
      return {
        entityId: client.entityId,
        project: client.projectName,
        model: `${client.entityName}/${client.projectName}/${client.modelName}:step${sampleTarget.checkpoint.step}`,
      };
    }
  }
  const tinkerSession = session ? await repo.findSession(db, session.sessionId) : undefined;
  const project = tinkerSession ? await repo.findProject(db, tinkerSession.projectId) : undefined;
  return { entityId, project: project?.name ?? 'inference', model: target.baseModel };
}

type Usage = { entityId: string; project: string; model: string };

/** Runs a stored sample request in the background; `usage` is looked up there, off the submission's path. */
async function runSample(
  requestId: string,
  target: SampleTarget,
  body: SampleBody,
  usageLookup: () => Promise<Usage>,
): Promise<void> {
  let update: Partial<repo.TinkerRequestRow>;
  try {
    const usage = await usageLookup();
    const result: SampleResult = await sampleTokens({
      target,
      prompt: body.prompt,
      numSamples: body.num_samples,
      params: body.sampling_params,
      promptLogprobs: Boolean(body.prompt_logprobs),
      topkPromptLogprobs: body.topk_prompt_logprobs ?? 0,
    });
    update = { status: 'done', result: result as unknown as Record<string, unknown> };
    recordUsage({
      ...usage,
      // The prompt's prefill is shared by the samples, as chat counts n choices.
      promptTokens: body.prompt.length,
      completionTokens: result.sequences.reduce((n, seq) => n + seq.tokens.length, 0),
    });
  } catch (err) {
    const user = err instanceof ApiError && err.status < 500;
    if (!user) log.error({ err, requestId }, 'sampling failed');
    update = {
      status: 'failed',
      error:
        err instanceof ApiError
          ? err.message
          : `Sampling failed (${(err as Error)?.name ?? 'error'}); see the server log`,
      errorCategory: user ? 'user' : 'server',
    };
  }
  try {
    await repo.updateRequest(await getDb(), requestId, { ...update, finishedAt: new Date() });
    await wake(requestKey(requestId));
  } catch (err) {
    log.error({ err, requestId }, 'could not store a sampling result');
  }
}
