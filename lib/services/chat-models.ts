import 'server-only';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import { BuiltinChatBackend, VllmChatBackend, type ChatBackend } from '@/lib/inference/backends';
import { modelNotFoundError } from '@/lib/inference/chat-errors';
import { parseModelName } from '@/lib/inference/model-name';
import { readArtifactBytes } from '@/lib/storage';
import { entityByName, type Principal } from './accounts';
import { builtinModelSource } from './builtin-models';
import { ApiError } from '@/lib/errors';
import { describeBaseModels, findBaseModel, hfModelDir, servedBy, servingStatus, vllmModelName } from './base-models';
import { hfBaseDescription, hfCheckpointDescription } from './hf-models';
import { adapterLoadingConfigured, materializeAdapter, vllmAdapters } from './vllm-adapters';
import { servedModels } from './served-models';

/** What serves a chat request: a backend (built-in engine or vLLM) and the name usage is recorded under. */
export interface ServedModel {
  backend: ChatBackend;
  /** The base id, or entity/project/name:stepN. */
  usageName: string;
  /** A trained model's entity and project, which its usage is billed to unless the request names another. */
  owner?: { entityId: string; project: string };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function servedBase(baseId: string, model: string): ServedModel {
  const base = findBaseModel(baseId);
  if (!base) throw modelNotFoundError(model);
  // A model we know whose engine cannot answer is the engine's problem, not a missing model: 503 and why.
  const status = servingStatus(base);
  if (!status.available)
    throw new ApiError('unavailable', `The model \`${model}\` cannot be served right now: ${status.reason}.`, {
      headers: { 'retry-after': '30' },
    });
  if (servedBy(base) === 'vllm')
    return { backend: new VllmChatBackend({ model: vllmModelName(base) }), usageName: baseId };
  if (base.backend === 'hf') {
    const dir = hfModelDir(base);
    if (!dir) throw modelNotFoundError(model);
    return { backend: new BuiltinChatBackend(hfBaseDescription(baseId, dir)), usageName: baseId };
  }
  const source = builtinModelSource(baseId);
  if (!source) throw modelNotFoundError(model);
  return { backend: new BuiltinChatBackend(source), usageName: baseId };
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
  return { ...servedWeights(checkpoint, record.baseModel, usageName, model), owner };
}

function servedWeights(
  checkpoint: { id: string; step: number; artifactKey: string | null },
  baseModel: string,
  usageName: string,
  model: string,
): ServedModel {
  const base = servedBase(baseModel, model);
  // Step 0 (and any checkpoint without its own weights) serves the base model's weights.
  if (!checkpoint.artifactKey || checkpoint.step === 0) return { ...base, usageName };
  if (base.backend instanceof VllmChatBackend) {
    // On vLLM a trained checkpoint is a LoRA adapter named by its canonical inference name. With a shared
    // adapter folder, Tuneboard loads it into vLLM before the first request; without one, vLLM must have it
    // already (registered at start with --lora-modules).
    const artifactKey = checkpoint.artifactKey;
    const checkpointId = checkpoint.id;
    const adapters = vllmAdapters();
    const loading = adapterLoadingConfigured() || findBaseModel(baseModel)?.backend === 'hf';
    return {
      backend: new VllmChatBackend({
        model: usageName,
        ...(loading
          ? {
              prepare: () =>
                adapters.ensure({ name: usageName, materialize: () => materializeAdapter(checkpointId, artifactKey) }),
              forget: () => adapters.forget(usageName),
            }
          : {}),
      }),
      usageName,
    };
  }
  const key = checkpoint.artifactKey;
  const description = (base.backend as BuiltinChatBackend).description;
  // A Hugging Face checkpoint is a PEFT adapter on its base (shared by every checkpoint in a thread).
  if (description.hf) {
    return { backend: new BuiltinChatBackend(hfCheckpointDescription(description, checkpoint.id, key)), usageName };
  }
  return {
    backend: new BuiltinChatBackend({
      ...description,
      model: { key: `ckpt:${checkpoint.id}`, source: { kind: 'weights' }, tokenizer: description.model.tokenizer },
      loadWeights: async () => {
        const bytes = await readArtifactBytes(key);
        if (!bytes) throw new Error(`checkpoint weights missing from the artifact store: ${key}`);
        return bytes;
      },
    }),
    usageName,
  };
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
    owned_by: m.backend === 'builtin' ? 'tuneboard' : 'upstream',
    max_model_len: m.contextLength,
    parameters: m.parameters,
    trained_by: m.trainedBy,
    served_by: m.servedBy,
    available: m.available,
    unavailable_reason: m.unavailableReason,
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
