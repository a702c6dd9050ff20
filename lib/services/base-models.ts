import 'server-only';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { config } from '@/lib/config';
import { baseModelSpec } from '@/lib/engine/base-models';
import { parameterCount } from '@/lib/engine/model';
import { REASONING_PARSERS } from '@/lib/inference/reasoning';
import { upstreamServer } from '@/lib/inference/upstream';
import { builtinModelSource } from './builtin-models';
import { parseHfConfig } from '@/lib/engine/hf/config';
import { hfDirProblem, servedContextLength } from './hf-models';
import { describeProgress, hubEnvironment, hubSnapshot, type HubSnapshot } from './hub-models';

const baseModelsFileSchema = z.object({
  models: z.array(
    z
      .object({
        id: z.string().min(1),
        /**
         * Who trains it: `builtin` the built-in CPU engine (tiny byte-level models), `hf` a Python worker
         * (PyTorch + Transformers + PEFT, workers/python) on a Hugging Face model, `upstream` nobody (served only).
         */
        backend: z.enum(['builtin', 'hf', 'upstream']),
        /**
         * `hf` only: a local directory in Hugging Face layout (config.json, *.safetensors, tokenizer.json,
         * tokenizer_config.json). Relative paths resolve against TUNEBOARD_BASE_MODELS_DIR, else the working
         * directory. Unset: a worker resolves `id` in its own Hugging Face cache.
         */
        path: z.string().min(1).optional(),
        /** `hf` only: who serves it and its checkpoints (LoRA adapters). Default `builtin` (the CPU engine). */
        serve: z.enum(['builtin', 'vllm']).optional(),
        description: z.string().optional(),
        /** The model's name at the upstream server, when it differs from `id`. */
        upstream_model: z.string().min(1).optional(),
        /**
         * vLLM's `--reasoning-parser` for the built-in engine (`qwen3`, `deepseek_r1`): `<think>…</think>` in an
         * answer goes to `reasoning`, the rest to `content`. Its checkpoints inherit it. Unset: none (README,
         * "Reasoning models", says why that is the default). A model vLLM serves uses vLLM's own flag instead.
         */
        reasoning_parser: z
          .enum(REASONING_PARSERS, {
            error: (issue) =>
              `unknown reasoning_parser ${JSON.stringify(issue.input)}; the built-in engine has vLLM's ${REASONING_PARSERS.map((p) => `"${p}"`).join(' and ')}`,
          })
          .optional(),
      })
      .superRefine((m, ctx) => {
        // Only the built-in engine applies it: vLLM parses with its own --reasoning-parser, and the byte-level
        // built-in models have no <think> token. Refused here rather than silently ignored.
        if (m.reasoning_parser !== undefined && !(m.backend === 'hf' && (m.serve ?? 'builtin') === 'builtin')) {
          ctx.addIssue({
            code: 'custom',
            path: ['reasoning_parser'],
            message:
              m.backend === 'builtin'
                ? 'reasoning_parser applies to Hugging Face models (backend "hf"); the byte-level built-in models have no <think> token'
                : 'reasoning_parser applies to models the built-in engine serves; a vLLM server splits reasoning with its own --reasoning-parser flag',
          });
        }
      }),
  ),
});
export type BaseModel = z.infer<typeof baseModelsFileSchema>['models'][number];

let cache: { file: string; mtimeMs: number; checkedAt: number; models: BaseModel[] } | undefined;

/**
 * How long the file's list is used before its modification time is looked at again. Every chat completion and
 * job claim looks a base model up; a stat each time cost a relayed completion about 35 µs of the request thread
 * (bench:gateway's profile), for a file that changes when an operator edits it. An edit shows within a second.
 */
const RECHECK_MS = 1000;

function loadAll(): BaseModel[] {
  const file = config.baseModelsFile;
  const now = performance.now();
  if (cache?.file === file && now - cache.checkedAt < RECHECK_MS) return cache.models;
  const { mtimeMs } = fs.statSync(file);
  if (cache?.file !== file || cache.mtimeMs !== mtimeMs) {
    cache = {
      file,
      mtimeMs,
      checkedAt: now,
      models: parseBaseModelsFile(file, fs.readFileSync(file, 'utf8')),
    };
  }
  cache.checkedAt = now;
  return cache.models;
}

/**
 * The file's models, or an error that names the file and each bad field (`models.2.reasoning_parser: unknown
 * reasoning_parser "qwen"; …`): an operator's typo, read at the first request after an edit.
 */
export function parseBaseModelsFile(file: string, text: string): BaseModel[] {
  const parsed = baseModelsFileSchema.safeParse(JSON.parse(text));
  if (parsed.success) return parsed.data.models;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  throw new Error(`The base-models file ${file} is invalid: ${problems}`);
}

function available(model: BaseModel): boolean {
  // A built-in model is usable once the engine knows it and its weights exist (seeded or built by the
  // pretraining script); an upstream one once an upstream server is configured.
  if (model.backend === 'builtin') return builtinModelSource(model.id) !== undefined;
  if (model.backend === 'upstream') return config.upstream !== undefined;
  // hf: trainable as soon as it is listed. Its weights live where the Python workers run (their own path or
  // Hugging Face cache), so this server cannot check them; a job waits, saying so, until a capable worker
  // connects, and a worker that cannot find the directory fails the job with what to do.
  return true;
}

/** Every entry of the base-models file, available or not (the job queue matches workers against them). */
export function allBaseModels(): BaseModel[] {
  return loadAll();
}

export type TrainingBackend = 'builtin' | 'hf';

/** What a worker says it can train when it claims (stored in the worker registry). */
export interface WorkerCapabilities {
  backends: TrainingBackend[];
  /** Only these base model ids; every model of its backends when absent. */
  base_models?: string[];
  /** `tinker`: it also takes Tinker training clients (docs/tinker.md §3). */
  kinds: ('rl' | 'sft' | 'tinker')[];
  /** Pinned to these models (a team's own machine, a test); all models when absent. */
  model_ids?: string[];
}

/** Whether a worker with these capabilities may train a job of `kind` on `model` (base model `baseModel`). */
export function canTrain(
  caps: WorkerCapabilities,
  job: { kind: 'rl' | 'sft'; modelId: string; baseModel: string },
): boolean {
  const entry = loadAll().find((m) => m.id === job.baseModel);
  if (!entry || entry.backend === 'upstream' || !caps.backends.includes(entry.backend)) return false;
  if (caps.base_models && !caps.base_models.includes(job.baseModel)) return false;
  if (caps.model_ids && !caps.model_ids.includes(job.modelId)) return false;
  return caps.kinds.includes(job.kind);
}

/** The base model ids a worker with these capabilities can train (the claim's filter). */
export function trainableBaseModelIds(caps: Pick<WorkerCapabilities, 'backends' | 'base_models'>): string[] {
  return loadAll()
    .filter((m) => m.backend !== 'upstream' && caps.backends.includes(m.backend))
    .filter((m) => !caps.base_models || caps.base_models.includes(m.id))
    .map((m) => m.id);
}

/** Base models that can be used right now: their backend is configured on this server. */
export function availableBaseModels(): BaseModel[] {
  return loadAll().filter(available);
}

export function findAvailableBaseModel(id: string): BaseModel | undefined {
  return availableBaseModels().find((m) => m.id === id);
}

/** Any base model of the file, usable right now or not (chat answers 503 with the reason for the latter). */
export function findBaseModel(id: string): BaseModel | undefined {
  return loadAll().find((m) => m.id === id);
}

// ---- Routing: one rule, read from the file --------------------------------------------------------------

/** Who trains a base model: the built-in runner, the Python worker (capability `hf`), or nobody. */
export type TrainedBy = 'builtin' | 'python-worker' | null;
/** Who serves a base model and its checkpoints. */
export type ServedBy = 'builtin' | 'vllm';

export function trainedBy(model: BaseModel): TrainedBy {
  if (model.backend === 'builtin') return 'builtin';
  if (model.backend === 'hf') return 'python-worker';
  return null;
}

export function servedBy(model: BaseModel): ServedBy {
  if (model.backend === 'upstream') return 'vllm';
  if (model.backend === 'hf') return model.serve ?? 'builtin';
  return 'builtin';
}

/** The name vLLM serves a base model under (`--served-model-name`), when vLLM serves it. */
export function vllmModelName(model: BaseModel): string {
  return model.upstream_model ?? model.id;
}

/**
 * A local Hugging Face directory of an `hf` base model, resolved: its `path`, or, for one named by its Hub id
 * that the built-in engine serves, its snapshot in the Hugging Face cache once fetched (lib/services/hub-models.ts;
 * asking starts the fetch). Undefined while it has none.
 */
export function hfModelDir(model: BaseModel): string | undefined {
  if (model.path) return path.resolve(/*turbopackIgnore: true*/ config.baseModelsDir, model.path);
  const hub = hubFetch(model);
  return hub?.state === 'ready' ? hub.dir : undefined;
}

/** The Hub fetch of an `hf` model without `path` that the built-in engine serves; undefined for any other. */
export function hubFetch(model: BaseModel): HubSnapshot | undefined {
  if (model.backend !== 'hf' || model.path || servedBy(model) !== 'builtin') return undefined;
  return hubSnapshot(model.id);
}

/** The fetch as the listings report it (`download` on /v1/models and /v1/preview/base-models). */
export interface HubDownloadInfo {
  status: 'downloading' | 'ready' | 'failed';
  done_bytes: number | null;
  total_bytes: number | null;
  error: string | null;
}

function downloadInfo(hub: HubSnapshot | undefined): HubDownloadInfo | null {
  if (!hub) return null;
  if (hub.state === 'ready') return { status: 'ready', done_bytes: null, total_bytes: null, error: null };
  if (hub.state === 'failed') return { status: 'failed', done_bytes: null, total_bytes: null, error: hub.error };
  return { status: 'downloading', done_bytes: hub.doneBytes, total_bytes: hub.totalBytes, error: null };
}

/** Starts fetching every Hub-named model the built-in engine serves, at start-up (as vLLM loads its model). */
export function prefetchHubModels(): void {
  for (const model of loadAll()) hubFetch(model);
}

export type ServingStatus = { available: true } | { available: false; reason: string };

/**
 * Whether the serving backend can answer for this model now, without asking the network: the reasons a
 * request would fail before reaching an engine. (A vLLM server that is configured but down is found by the
 * request itself, or by `describeBaseModels`, which probes it.)
 */
export function servingStatus(model: BaseModel): ServingStatus {
  if (servedBy(model) === 'vllm') {
    return config.upstreamUrl
      ? { available: true }
      : { available: false, reason: 'no vLLM server is configured on this Tuneboard (TUNEBOARD_UPSTREAM_URL)' };
  }
  if (model.backend === 'builtin') {
    if (builtinModelSource(model.id)) return { available: true };
    return baseModelSpec(model.id)
      ? { available: false, reason: 'its weights file is missing from models/ (npm run engine:pretrain builds it)' }
      : { available: false, reason: 'the built-in engine does not know this model' };
  }
  const hub = hubFetch(model);
  if (hub?.state === 'downloading') {
    return {
      available: false,
      reason: `it is being downloaded from the Hugging Face Hub (${new URL(hubEnvironment().endpoint).host}): ${describeProgress(hub)}`,
    };
  }
  if (hub?.state === 'failed') return { available: false, reason: hub.error };
  const problem = hfDirProblem(hfModelDir(model));
  return problem ? { available: false, reason: problem } : { available: true };
}

// ---- Descriptions for listings (GET /v1/models, the dashboard's picker) ----------------------------------

export interface BaseModelInfo {
  id: string;
  backend: BaseModel['backend'];
  description: string | null;
  trainedBy: TrainedBy;
  servedBy: ServedBy;
  parameters: number | null;
  contextLength: number | null;
  available: boolean;
  unavailableReason: string | null;
  /** A Hub-named model's fetch for serving; null for any other. */
  download: HubDownloadInfo | null;
}

interface VllmModelCard {
  id: string;
  max_model_len?: number;
}

const PROBE_TTL_MS = 5_000;
const PROBE_TIMEOUT_MS = 2_000;
let probe: { at: number; url: string; result: Promise<VllmModelCard[] | { error: string }> } | undefined;

/** vLLM's own model list (GET /v1/models), cached for a few seconds: it says what it serves and that it is up. */
function vllmModels(): Promise<VllmModelCard[] | { error: string }> | undefined {
  const server = upstreamServer();
  if (!server) return undefined;
  if (probe && probe.url === server.baseUrl && Date.now() - probe.at < PROBE_TTL_MS) return probe.result;
  const result = (async () => {
    try {
      const res = await server.fetch(`${server.baseUrl}/models`, {
        headers: server.apiKey ? { authorization: `Bearer ${server.apiKey}` } : {},
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      if (!res.ok) return { error: `the vLLM server answered ${res.status} to GET /v1/models` };
      const body = (await res.json()) as { data?: VllmModelCard[] };
      return Array.isArray(body.data) ? body.data : { error: 'the vLLM server sent an unexpected model list' };
    } catch {
      return { error: 'the vLLM server is not reachable' };
    }
  })();
  probe = { at: Date.now(), url: server.baseUrl, result };
  return result;
}

/**
 * The context vLLM serves a model with: the `max_model_len` of its card in vLLM's model list (the probe above, so
 * cached a few seconds), null when the card has none; or why vLLM cannot say (not configured, not reachable, or it
 * does not serve the model).
 */
export async function vllmContextLength(
  model: BaseModel,
): Promise<{ contextLength: number | null } | { error: string }> {
  const cards = await vllmModels();
  if (!cards) return { error: 'no vLLM server is configured on this Tuneboard (TUNEBOARD_UPSTREAM_URL)' };
  if ('error' in cards) return cards;
  const card = cards.find((c) => c.id === vllmModelName(model));
  if (!card) return { error: `the vLLM server does not serve ${vllmModelName(model)}` };
  return { contextLength: typeof card.max_model_len === 'number' ? card.max_model_len : null };
}

const hfFacts = new Map<string, { mtimeMs: number; parameters: number | null; contextLength: number | null }>();

/** Parameter count (from the safetensors headers) and context length (config.json) of a local HF directory. */
function hfDirFacts(dir: string): { parameters: number | null; contextLength: number | null } {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(path.join(dir, 'config.json'));
  } catch {
    return { parameters: null, contextLength: null };
  }
  const cached = hfFacts.get(dir);
  if (cached && cached.mtimeMs === stat.mtimeMs) return cached;
  let contextLength: number | null = null;
  try {
    const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    const text = (cfg.text_config ?? cfg) as Record<string, unknown>;
    if (typeof text.max_position_embeddings === 'number') contextLength = text.max_position_embeddings;
  } catch {
    // unreadable config: unknown
  }
  let parameters: number | null = 0;
  try {
    const files = fs.readdirSync(dir).filter((f) => f.endsWith('.safetensors'));
    if (files.length === 0) parameters = null;
    for (const f of files) {
      const fd = fs.openSync(path.join(dir, f), 'r');
      try {
        const len = Buffer.alloc(8);
        fs.readSync(fd, len, 0, 8, 0);
        const headerLen = Number(len.readBigUInt64LE(0));
        const header = Buffer.alloc(headerLen);
        fs.readSync(fd, header, 0, headerLen, 8);
        const tensors = JSON.parse(header.toString('utf8')) as Record<string, { shape?: number[] }>;
        for (const [name, t] of Object.entries(tensors)) {
          if (name !== '__metadata__') parameters! += (t.shape ?? []).reduce((a, b) => a * b, 1);
        }
      } finally {
        fs.closeSync(fd);
      }
    }
  } catch {
    parameters = null;
  }
  const facts = { mtimeMs: stat.mtimeMs, parameters, contextLength };
  hfFacts.set(dir, facts);
  return facts;
}

/** Every base model of the file with who trains and serves it, its size and whether it can be served now. */
export async function describeBaseModels(): Promise<BaseModelInfo[]> {
  const models = loadAll();
  const vllm = models.some((m) => servedBy(m) === 'vllm') ? await vllmModels() : undefined;
  return models.map((m) => {
    let parameters: number | null = null;
    let contextLength: number | null = null;
    const spec = m.backend === 'builtin' ? baseModelSpec(m.id) : undefined;
    if (spec) {
      parameters = parameterCount(spec.config);
      contextLength = spec.config.ctx;
    }
    const dir = m.backend === 'hf' ? hfModelDir(m) : undefined;
    if (dir) ({ parameters, contextLength } = hfDirFacts(dir));
    let status = servingStatus(m);
    // The built-in engine serves a capped context (its KV cache lives in a 4 GiB wasm heap).
    if (dir && status.available && servedBy(m) === 'builtin') {
      try {
        contextLength = servedContextLength(
          parseHfConfig(JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'))),
        );
      } catch {
        // hfDirProblem already vetted config.json; a file changed since keeps the listing's own figure.
      }
    }
    if (status.available && servedBy(m) === 'vllm' && vllm) {
      if ('error' in vllm) status = { available: false, reason: vllm.error };
      else {
        const card = vllm.find((c) => c.id === vllmModelName(m));
        if (!card) status = { available: false, reason: `the vLLM server does not serve ${vllmModelName(m)}` };
        else if (typeof card.max_model_len === 'number') contextLength = card.max_model_len;
      }
    }
    return {
      id: m.id,
      backend: m.backend,
      description: m.description ?? null,
      trainedBy: trainedBy(m),
      servedBy: servedBy(m),
      parameters,
      contextLength,
      available: status.available,
      unavailableReason: status.available ? null : status.reason,
      download: downloadInfo(hubFetch(m)),
    };
  });
}

/** The dashboard's and /v1/preview/base-models' shape of `describeBaseModels()`. */
export async function baseModelDtos() {
  return (await describeBaseModels()).map((m) => ({
    id: m.id,
    backend: m.backend,
    description: m.description,
    trained_by: m.trainedBy,
    served_by: m.servedBy,
    parameters: m.parameters,
    context_length: m.contextLength,
    available: m.available,
    unavailable_reason: m.unavailableReason,
    download: m.download,
  }));
}
