import 'server-only';
import { config } from '@/lib/config';
import { getDb } from '@/lib/db/client';
import { findCheckpointModel } from '@/lib/db/repositories/models';
import { ApiError } from '@/lib/errors';
import { descriptionTokenizer } from '@/lib/inference/backends';
import {
  resolveTokenSampling,
  sampleOnBuiltin,
  sampleOnVllm,
  type TinkerSamplingParams,
  type TokenSampling,
} from '@/lib/inference/token-sampling';
import type { SampleResult } from '@/lib/tinker/types';
import { vllmContextLength } from '../base-models';
import { findBaseModel } from '@/lib/catalog/base-models';
import { servingEngine, type ServingEngine } from '../chat-models';
import { servedModels } from '../served-models';

export type { TinkerSamplingParams } from '@/lib/inference/token-sampling';
export { MAX_NUM_SAMPLES } from '@/lib/inference/token-sampling';

/**
 * The sampler behind Tinker's `asample` (docs/tinker.md): a base model or a checkpoint, prompt token ids and
 * Tinker's SamplingParams in; sampled token ids with their log-probabilities (and prompt logprobs when asked) out,
 * through the engines that serve /v1/chat/completions, resolved the same way (chat-models.ts `servingEngine`).
 * The checks and the engines' wire are lib/inference/token-sampling.ts.
 */

/** What to sample from: a base model of the base-models file, or a trained model's checkpoint on its base. */
export interface SampleTarget {
  baseModel: string;
  /** Null, step 0 or no artifact: the base model itself. */
  checkpoint: { id: string; step: number; artifactKey: string | null } | null;
}

export interface SampleInput {
  target: SampleTarget;
  prompt: number[];
  numSamples: number;
  params: TinkerSamplingParams;
  promptLogprobs: boolean;
  topkPromptLogprobs: number;
  signal?: AbortSignal;
}

/** What a route may want to know of a target before queueing a request for it. */
export interface SampleTargetInfo {
  servedBy: 'builtin' | 'vllm';
  /** vLLM's from its model list; null when its card has none (`max_tokens` is then required). */
  contextLength: number | null;
  /** Null when vLLM serves it: vLLM checks prompt ids itself (its 400 comes back as the sampler's). */
  vocabSize: number | null;
}

/**
 * A checkpoint's canonical inference name, `entity/project/name:stepN`, as chat names it: vLLM loads its adapter
 * under that name, so chat and the sampler share one load. Cached as chat's lookups are (tagged by the model, so a
 * deleted checkpoint is forgotten). A checkpoint that no longer exists (an old ephemeral sampler save) is a 404.
 */
async function checkpointName(checkpoint: { id: string; step: number }): Promise<string> {
  const model = await servedModels.get(`checkpoint:${checkpoint.id}`, async () => {
    const record = await findCheckpointModel(await getDb(), checkpoint.id);
    return record && { value: `${record.entityName}/${record.projectName}/${record.name}`, tag: record.id };
  });
  if (!model) throw ApiError.notFound(`Checkpoint ${checkpoint.id} does not exist (any more).`);
  return `${model}:step${checkpoint.step}`;
}

/** The engine for a target: unknown base model 404, one that cannot be served now 503 with the reason. */
async function engineFor(target: SampleTarget): Promise<ServingEngine> {
  const c = target.checkpoint;
  const own = c && c.artifactKey && c.step !== 0 ? { ...c, name: await checkpointName(c) } : null;
  return servingEngine(target.baseModel, own, target.baseModel);
}

/**
 * A target's engine and limits. vLLM's context comes from its model list (cached a few seconds, as the listings
 * probe it): the sampler sends an explicit max_tokens, vLLM's default being 16. A vLLM that cannot say (down, not
 * serving the model) is the 503 chat gives for a model that cannot be served now.
 */
async function resolveTarget(target: SampleTarget): Promise<{ engine: ServingEngine; info: SampleTargetInfo }> {
  const engine = await engineFor(target);
  if (engine.kind === 'builtin') {
    const d = engine.description;
    return {
      engine,
      info: { servedBy: 'builtin', contextLength: d.contextLength, vocabSize: descriptionTokenizer(d).vocabSize },
    };
  }
  // servingEngine found the base model.
  const served = await vllmContextLength(findBaseModel(target.baseModel)!);
  if ('error' in served)
    throw new ApiError(
      'unavailable',
      `The model \`${target.baseModel}\` cannot be served right now: ${served.error}.`,
      {
        headers: { 'retry-after': '30' },
      },
    );
  return { engine, info: { servedBy: 'vllm', contextLength: served.contextLength, vocabSize: null } };
}

/** Who serves a target and its limits; throws what sampling it would (404 unknown base model, 503 not servable now). */
export async function describeSampleTarget(target: SampleTarget): Promise<SampleTargetInfo> {
  return (await resolveTarget(target)).info;
}

async function prepare(
  input: Omit<SampleInput, 'signal'>,
): Promise<{ engine: ServingEngine; sampling: TokenSampling }> {
  const { engine, info } = await resolveTarget(input.target);
  return { engine, sampling: resolveTokenSampling(input, { ...info, maxLogprobs: config.maxLogprobs }) };
}

/**
 * Every check `sampleTokens` makes before it samples, for a route to refuse a request (400, 404, 503) when it is
 * submitted rather than when it runs. What vLLM checks itself (prompt ids against its vocabulary) is not among them.
 */
export async function checkSampleRequest(input: Omit<SampleInput, 'signal'>): Promise<void> {
  await prepare(input);
}

/**
 * `numSamples` independent samples of one prompt (they share its prefill), with vLLM's semantics: temperature 0
 * greedy, sample i seeded with seed + i, stops at EOS, the generation config's stop ids, `stop` ids or strings,
 * `max_tokens` (default: the rest of the context). Each sample's tokens are every generated token, the stopping one
 * included, and `logprobs[i]` is the raw model's log-probability of `tokens[i]` (temperature 1, no top-k/top-p).
 * Errors: ApiError 400 for a request that cannot be sampled (the message says what to change), 404 for an unknown
 * base model or a checkpoint gone, 503 when the model cannot be served now, 500 when the engine fails. `signal`
 * stops the generation; the promise then rejects with its reason.
 */
export async function sampleTokens(input: SampleInput): Promise<SampleResult> {
  const { engine, sampling } = await prepare(input);
  return engine.kind === 'builtin'
    ? sampleOnBuiltin(engine.description, sampling, input.signal)
    : sampleOnVllm(engine.target, sampling, input.signal);
}
