import 'server-only';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import {
  BuiltinChatBackend,
  VllmChatBackend,
  type BuiltinModelDescription,
  type ChatBackend,
  type VllmTarget,
} from '@/lib/inference/backends';
import { modelNotFoundError } from '@/lib/inference/chat-errors';
import { parseModelName } from '@/lib/inference/model-name';
import { readArtifactBytes } from '@/lib/storage';
import { entityByName, type Principal } from './accounts';
import { builtinModelSource } from '@/lib/catalog/builtin-models';
import { ApiError } from '@/lib/errors';
import { describeBaseModels, hfModelDir, servingStatus } from './base-models';
import { findBaseModel, servedBy, vllmModelName } from '@/lib/catalog/base-models';
import { hfBaseDescription } from '@/lib/catalog/hf-folders';
import { hfCheckpointDescription, llamaCppBaseDescription, llamaCppCheckpointDescription } from './hf-models';
import { adapterLoadingConfigured, materializeAdapter, vllmAdapters } from './vllm-adapters';
import { servedModels } from './served-models';

/** What serves a chat request: a backend (built-in engine or vLLM) and the name usage is recorded under. */
export interface ServedModel {
  backend: ChatBackend;
  /** The base id, or entity/project/name:stepN. */
  usageName: string;
  /** A trained model's entity and project, which its usage is billed to unless the request names another. */
  owner?: { entityId: string; project: string };
  /** A trained model's checkpoint: which one (eval runs record it with their targets). */
  checkpoint?: { modelId: string; step: number };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A trained model's checkpoint as serving needs it: its weights, and the name vLLM knows its adapter by. */
export interface ServedCheckpoint {
  id: string;
  step: number;
  /** Null (or step 0): no weights of its own, the base model's serve it. */
  artifactKey: string | null;
  /**
   * Its canonical inference name, `entity/project/name:stepN`: on vLLM its adapter is loaded under this name,
   * so chat and the sampler share one load.
   */
  name: string;
}

/**
 * The engine that answers for a base model or a checkpoint: the built-in engine with the model's description, or
 * a vLLM server under a name. Chat wraps it in a ChatBackend; the Tinker sampler (lib/services/tinker/sampler.ts)
 * drives the same engines token by token, so both serve exactly the same weights.
 */
export type ServingEngine =
  { kind: 'builtin'; description: BuiltinModelDescription } | { kind: 'vllm'; target: VllmTarget };

/** What serves `baseModel`, or `checkpoint` on top of it; `model` is the name errors quote (what the caller asked for). */
export function servingEngine(baseModel: string, checkpoint: ServedCheckpoint | null, model: string): ServingEngine {
  const base = findBaseModel(baseModel);
  if (!base) throw modelNotFoundError(model);
  // A model we know whose engine cannot answer is the engine's problem, not a missing model: 503 and why.
  const status = servingStatus(base);
  if (!status.available)
    throw new ApiError('unavailable', `The model \`${model}\` cannot be served right now: ${status.reason}.`, {
      headers: { 'retry-after': '30' },
    });
  // Step 0 (and any checkpoint without its own weights) serves the base model's weights.
  const artifactKey = checkpoint && checkpoint.step !== 0 ? checkpoint.artifactKey : null;
  if (servedBy(base) === 'vllm') {
    if (!checkpoint || !artifactKey) return { kind: 'vllm', target: { model: vllmModelName(base) } };
    // On vLLM a trained checkpoint is a LoRA adapter named by its canonical inference name. With a shared
    // adapter folder, Tuneboard loads it into vLLM before the first request; without one, vLLM must have it
    // already (registered at start with --lora-modules).
    const name = checkpoint.name;
    const checkpointId = checkpoint.id;
    const adapters = vllmAdapters();
    const loading = adapterLoadingConfigured() || base.backend === 'hf';
    return {
      kind: 'vllm',
      target: {
        model: name,
        ...(loading
          ? {
              prepare: () =>
                adapters.ensure({ name, materialize: () => materializeAdapter(checkpointId, artifactKey) }),
              forget: () => adapters.forget(name),
            }
          : {}),
      },
    };
  }
  let description: BuiltinModelDescription | undefined;
  if (base.backend === 'hf') {
    const dir = hfModelDir(base);
    const hf = dir ? hfBaseDescription(baseModel, dir) : undefined;
    // The parser is the base model's, from the file (the description is cached per directory); checkpoints
    // are built from this description below and so inherit it.
    description = hf && { ...hf, reasoningParser: base.reasoning_parser ?? null };
    // `"engine": "llama.cpp"` serves the base (and step 0) on llama.cpp, and a trained checkpoint there too, its
    // adapter a llama.cpp LoRA file applied at run time; one llama.cpp cannot apply keeps the WebAssembly engine.
    if (description && dir && base.engine === 'llama.cpp') {
      if (!checkpoint || !artifactKey)
        return { kind: 'builtin', description: llamaCppBaseDescription(description, base, dir) };
      const onWasm = hfCheckpointDescription(description, checkpoint.id, artifactKey);
      return {
        kind: 'builtin',
        description: llamaCppCheckpointDescription(description, base, dir, {
          id: checkpoint.id,
          artifactKey,
          onWasm,
        }),
      };
    }
  } else description = builtinModelSource(baseModel);
  if (!description) throw modelNotFoundError(model);
  if (!checkpoint || !artifactKey) return { kind: 'builtin', description };
  // A Hugging Face checkpoint is a PEFT adapter on its base (shared by every checkpoint in a thread).
  if (description.hf)
    return { kind: 'builtin', description: hfCheckpointDescription(description, checkpoint.id, artifactKey) };
  return {
    kind: 'builtin',
    description: {
      ...description,
      model: { key: `ckpt:${checkpoint.id}`, source: { kind: 'weights' }, tokenizer: description.model.tokenizer },
      loadWeights: async () => {
        const bytes = await readArtifactBytes(artifactKey);
        if (!bytes) throw new Error(`checkpoint weights missing from the artifact store: ${artifactKey}`);
        return bytes;
      },
    },
  };
}

function chatBackend(engine: ServingEngine): ChatBackend {
  return engine.kind === 'builtin' ? new BuiltinChatBackend(engine.description) : new VllmChatBackend(engine.target);
}

function servedBase(baseId: string, model: string): ServedModel {
  return { backend: chatBackend(servingEngine(baseId, null, model)), usageName: baseId };
}

/** A trained model's checkpoint (found in one query with its model), billed to the model's entity and project. */
function servedCheckpoint(
  found: Awaited<ReturnType<typeof modelsRepo.findModelCheckpoint>>,
  label: (record: modelsRepo.ModelWithNames) => string,
  model: string,
): ServedModel {
  if (!found?.checkpoint) throw modelNotFoundError(model);
  const { checkpoint, model: record } = found;
  const usageName = `${label(record)}:step${checkpoint.step}`;
  const owner = { entityId: record.entityId, project: record.projectName };
  const engine = servingEngine(record.baseModel, { ...checkpoint, name: usageName }, model);
  return { backend: chatBackend(engine), usageName, owner, checkpoint: { modelId: record.id, step: checkpoint.step } };
}

/**
 * Resolves the `model` of a chat request within the key's scope (docs/contract.md §7): a base-model id, a model
 * record's id, or `[wandb-artifact:///]entity/project/name[:stepN|:latest]`. Anything else, or anything
 * outside the caller's entities, is vLLM's 404 with the name as sent.
 */
export async function resolveChatModel(principal: Principal, model: string | null | undefined): Promise<ServedModel> {
  const target = parseModelName(model);
  // PostgreSQL text cannot hold NUL: such a name can match nothing, so answer without a lookup.
  if (model?.includes('\u0000')) throw modelNotFoundError(model);
  const name = model as string;
  const db = await getDb();
  if (target.kind === 'unknown') throw modelNotFoundError(name);
  if (target.kind === 'base') {
    if (UUID.test(target.id)) {
      const found = await cachedModelCheckpoint(`id:${target.id}`, () =>
        modelsRepo.findModelCheckpoint(db, { id: target.id }, 'latest'),
      );
      // Found for any caller (the lookup and its cache entry are shared): this one sees it only if one of its
      // entities owns it; to anyone else it does not exist.
      if (found && principal.memberships.some((m) => m.id === found.model.entityId))
        return servedCheckpoint(found, (r) => `${r.entityName}/${r.projectName}/${r.name}`, name);
    }
    return servedBase(target.id, name);
  }
  const entity = entityByName(principal, target.entity);
  const version = target.version;
  const found = entity
    ? await cachedModelCheckpoint(
        `name:${entity.id}|${target.project}|${target.name}|${version === 'latest' ? 'latest' : version.step}`,
        () =>
          modelsRepo.findModelCheckpoint(
            db,
            { entityId: entity.id, project: target.project, name: target.name },
            version,
          ),
      )
    : undefined;
  // The name as the caller wrote it (its entity's spelling), as before.
  return servedCheckpoint(found, () => `${target.entity}/${target.project}/${target.name}`, name);
}

/** A model with the checkpoint that serves it, from the cache of served models when it is there. */
function cachedModelCheckpoint(key: string, load: () => ReturnType<typeof modelsRepo.findModelCheckpoint>) {
  return servedModels.get(key, async () => {
    const found = await load();
    return found?.checkpoint ? { value: found, tag: found.model.id } : undefined;
  });
}

/**
 * GET /v1/models: every base model of this server, with who trains and serves it, its size, context length
 * and whether its serving engine can answer now (and why not); then the caller's trained models by their
 * `entity/project/name` inference name (latest checkpoint), newest first, with their base as `parent`.
 */
export async function listServableModels(principal: Principal) {
  const db = await getDb();
  const started = Math.floor(Date.now() / 1000);
  const described = await describeBaseModels();
  const byId = new Map(described.map((m) => [m.id, m]));
  const base = described.map((m) => ({
    id: m.id,
    object: 'model' as const,
    created: started,
    // Who serves it, not which backend trains it: an `hf` model on the built-in engine is Tuneboard's, as vLLM says `vllm`.
    owned_by: m.servedBy === 'builtin' ? 'tuneboard' : 'upstream',
    max_model_len: m.contextLength,
    parameters: m.parameters,
    trained_by: m.trainedBy,
    served_by: m.servedBy,
    available: m.available,
    unavailable_reason: m.unavailableReason,
    ...(m.download ? { download: m.download } : {}),
  }));
  const records = await modelsRepo.listModels(db, { entityIds: principal.memberships.map((m) => m.id), limit: 1000 });
  const trained = records.map((r) => {
    const parent = byId.get(r.baseModel);
    return {
      id: `${r.entityName}/${r.projectName}/${r.name}`,
      object: 'model' as const,
      created: Math.floor(r.createdAt.getTime() / 1000),
      owned_by: r.entityName,
      parent: r.baseModel,
      max_model_len: parent?.contextLength ?? null,
      served_by: parent?.servedBy ?? null,
      available: parent?.available ?? false,
      unavailable_reason: parent ? parent.unavailableReason : 'its base model is no longer configured on this server',
    };
  });
  return { object: 'list' as const, data: [...base, ...trained] };
}
