import 'server-only';
import fs from 'node:fs';
import path from 'node:path';
import { config } from '@/lib/config';
import { baseModelSpec } from '@/lib/engine/base-models';
import { parameterCount } from '@/lib/engine/model';
import { upstreamServer } from '@/lib/inference/upstream';
import { builtinModelSource } from '@/lib/catalog/builtin-models';
import {
  allBaseModels,
  servedBy,
  trainedBy,
  vllmModelName,
  type BaseModel,
  type ServedBy,
  type TrainedBy,
} from '@/lib/catalog/base-models';
import { parseHfConfig } from '@/lib/engine/hf/config';
import { hfDirProblem, servedContextLength } from '@/lib/catalog/hf-folders';
import { describeProgress, hubEnvironment, hubSnapshot, type HubSnapshot } from './hub-models';

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
  for (const model of allBaseModels()) hubFetch(model);
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
  const models = allBaseModels();
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
