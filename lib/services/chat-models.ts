import 'server-only';
import type { ModelConfig } from '@/lib/engine/model';
import { getDb } from '@/lib/db/client';
import * as modelsRepo from '@/lib/db/repositories/models';
import { modelNotFoundError } from '@/lib/inference/chat-errors';
import { parseModelName } from '@/lib/inference/model-name';
import type { ModelSpec } from '@/lib/inference/wire';
import { readArtifactBytes } from '@/lib/storage';
import { entityByName, type Principal } from './accounts';
import { builtinModelSource } from './builtin-models';
import { availableBaseModels, findAvailableBaseModel } from './base-models';

/** What serves a chat request: the built-in engine (which weights, how to load them) or the upstream server. */
export type ServedModel =
  | {
      kind: 'builtin';
      spec: ModelSpec;
      loadWeights?: () => Promise<Uint8Array>;
      config: Pick<ModelConfig, 'ctx' | 'vocab'>;
      /** The name usage is recorded under: the base id, or entity/project/name:stepN. */
      usageName: string;
    }
  | {
      kind: 'upstream';
      /** The base model's upstream name, or the checkpoint's LoRA adapter name. */
      upstreamModel: string;
      usageName: string;
    };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function servedBase(baseId: string, model: string): ServedModel {
  const base = findAvailableBaseModel(baseId);
  if (base?.backend === 'upstream')
    return { kind: 'upstream', upstreamModel: base.upstream_model ?? base.id, usageName: baseId };
  const source = base?.backend === 'builtin' ? builtinModelSource(baseId) : undefined;
  if (!source) throw modelNotFoundError(model);
  return { kind: 'builtin', ...source, usageName: baseId };
}

async function servedCheckpoint(
  modelId: string,
  baseModel: string,
  label: string,
  version: 'latest' | { step: number },
  model: string,
): Promise<ServedModel> {
  const db = await getDb();
  const checkpoint =
    version === 'latest'
      ? await modelsRepo.latestCheckpoint(db, modelId)
      : await modelsRepo.findCheckpointByStep(db, modelId, version.step);
  if (!checkpoint) throw modelNotFoundError(model);
  const usageName = `${label}:step${checkpoint.step}`;
  const base = servedBase(baseModel, model);
  // Step 0 (and any checkpoint without its own weights) serves the base model's weights.
  if (!checkpoint.artifactKey || checkpoint.step === 0) return { ...base, usageName };
  // Upstream, a trained checkpoint is a LoRA adapter registered under its canonical inference name.
  if (base.kind === 'upstream') return { kind: 'upstream', upstreamModel: usageName, usageName };
  const key = checkpoint.artifactKey;
  return {
    kind: 'builtin',
    spec: { key: `ckpt:${checkpoint.id}`, source: { kind: 'weights' } },
    loadWeights: async () => {
      const bytes = await readArtifactBytes(key);
      if (!bytes) throw new Error(`checkpoint weights missing from the artifact store: ${key}`);
      return bytes;
    },
    config: base.config,
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
      const record = await modelsRepo.findModelInScope(
        db,
        target.id,
        principal.memberships.map((m) => m.id),
      );
      if (record) {
        const label = `${record.entityName}/${record.projectName}/${record.name}`;
        return servedCheckpoint(record.id, record.baseModel, label, 'latest', name);
      }
    }
    return servedBase(target.id, name);
  }
  const entity = entityByName(principal, target.entity);
  const record = entity ? await modelsRepo.findModelByName(db, entity.id, target.project, target.name) : undefined;
  if (!record) throw modelNotFoundError(name);
  return servedCheckpoint(
    record.id,
    record.baseModel,
    `${target.entity}/${target.project}/${target.name}`,
    target.version,
    name,
  );
}

/**
 * GET /v1/models: the base models this server can serve, then the caller's trained models by their
 * `entity/project/name` inference name (latest checkpoint), newest first.
 */
export async function listServableModels(principal: Principal) {
  const db = await getDb();
  const started = Math.floor(Date.now() / 1000);
  const base = availableBaseModels().map((m) => ({
    id: m.id,
    object: 'model' as const,
    created: started,
    owned_by: m.backend === 'builtin' ? 'tuneboard' : 'upstream',
  }));
  const records = await modelsRepo.listModels(db, { entityIds: principal.memberships.map((m) => m.id), limit: 1000 });
  const trained = records.map((r) => ({
    id: `${r.entityName}/${r.projectName}/${r.name}`,
    object: 'model' as const,
    created: Math.floor(r.createdAt.getTime() / 1000),
    owned_by: r.entityName,
  }));
  return { object: 'list' as const, data: [...base, ...trained] };
}
