import 'server-only';
import crypto from 'node:crypto';
import { ApiError } from '@/lib/errors';
import { formatTinkerPath, parseTinkerPath as parseWirePath } from '@/lib/schemas/tinker';
import { getDb } from '@/lib/db/client';
import * as repo from '@/lib/db/repositories/tinker';
import { artifactExists, artifactWebStream } from '@/lib/storage';
import { accessibleEntityIds, type Principal } from '../accounts';
import { requirePermission } from '../permissions';
import { tarSize, tarStream } from '../tar-archive';
import { requireTrainingClient } from './training';
import { checkpointIdOf, tinkerPath, type WeightFile, type WeightsKind } from './weights-files';
import { afterCommit, dropSaved, runAfterCommit } from './worker-queue';

/**
 * Saved weights by their `tinker://` paths (docs/tinker.md §2.6): resolving them for load_weights and sampling, the
 * SDK's REST routes (training runs, checkpoint lists, delete, archive download, weights_info).
 */

export interface ParsedPath {
  modelId: string;
  kind: WeightsKind;
  name: string;
}

/** docs/tinker.md §2.6's paths (lib/schemas/tinker.ts parses them), with the storage kind they name. */
export function parseTinkerPath(path: string): ParsedPath {
  const parsed = parseWirePath(path);
  return { modelId: parsed.model_id, kind: parsed.kind === 'weights' ? 'training' : 'sampler', name: parsed.name };
}

/** A save of the caller's; 404 when it does not exist or lies outside the caller's entities. */
export async function resolveWeights(principal: Principal, path: string) {
  const parsed = parseTinkerPath(path);
  const client = await requireTrainingClient(principal, parsed.modelId).catch((err: unknown) => {
    if (err instanceof ApiError && err.code === 'not_found') throw ApiError.notFound(`No saved weights at ${path}`);
    throw err;
  });
  const row = await repo.findWeights(await getDb(), parsed.modelId, parsed.kind, parsed.name);
  if (!row) throw ApiError.notFound(`No saved weights at ${path} (deleted, expired, or never saved)`);
  return { parsed, client, row };
}

/** The payload of a load_weights request: which files the worker fetches, and where the server finds them. */
export async function loadPayload(
  principal: Principal,
  target: repo.TrainingClientRow,
  path: string,
  optimizer: boolean,
) {
  const { client: source, row } = await resolveWeights(principal, path);
  const lora = (x: repo.TrainingClientRow) => x.lora as Record<string, unknown>;
  const mismatch = ['rank', 'train_mlp', 'train_attn', 'train_unembed'].filter(
    (k) => lora(source)[k] !== lora(target)[k],
  );
  if (mismatch.length > 0) {
    throw new ApiError(
      'bad_request',
      `${path} was saved with other LoRA settings (${mismatch.map((k) => `${k}: ${String(lora(source)[k])} there, ${String(lora(target)[k])} here`).join('; ')}); create the training client with create_training_client_from_state, which takes them from the weights`,
    );
  }
  if (source.baseModel !== target.baseModel) {
    throw new ApiError(
      'bad_request',
      `${path} holds weights of ${source.baseModel}; this training client trains ${target.baseModel}`,
    );
  }
  const files: WeightFile[] = ['adapter_config.json', 'adapter_model.safetensors'];
  if (optimizer) {
    if (row.kind !== 'training' || !(await artifactExists(`${row.prefix}/optimizer.safetensors`))) {
      throw new ApiError(
        'bad_request',
        `${path} holds sampler weights without an optimizer state; load it with load_state (weights only), or save the state with save_state to resume with its optimizer`,
      );
    }
    files.push('optimizer.safetensors');
  }
  return { optimizer, files, tuneboard: { source_prefix: row.prefix, source_path: path } };
}

export async function weightsInfo(principal: Principal, path: string) {
  const { client } = await resolveWeights(principal, path);
  const lora = client.lora as { rank: number; train_mlp: boolean; train_attn: boolean; train_unembed: boolean };
  return {
    base_model: client.baseModel,
    is_lora: true,
    lora_rank: lora.rank,
    train_unembed: lora.train_unembed,
    train_mlp: lora.train_mlp,
    train_attn: lora.train_attn,
  };
}

function checkpointDto(row: repo.TinkerWeightsRow) {
  return {
    checkpoint_id: checkpointIdOf(row.kind, row.name),
    checkpoint_type: row.kind,
    time: row.createdAt.toISOString(),
    tinker_path: tinkerPath(row.modelId, row.kind, row.name),
    size_bytes: row.sizeBytes,
    public: false,
    expires_at: row.expiresAt?.toISOString() ?? null,
  };
}

async function trainingRunDto(client: repo.TrainingClientWithModel) {
  const saved = await repo.listWeightsOfModel(await getDb(), client.modelId);
  const latest = (kind: WeightsKind) => saved.find((w) => w.kind === kind);
  const training = latest('training');
  const sampler = latest('sampler');
  return {
    training_run_id: client.modelId,
    base_model: client.baseModel,
    model_owner: client.entityName,
    is_lora: true,
    corrupted: false,
    lora_rank: Number((client.lora as { rank?: number }).rank ?? 0),
    last_request_time: client.lastRequestAt.toISOString(),
    last_checkpoint: training ? checkpointDto(training) : null,
    last_sampler_checkpoint: sampler ? checkpointDto(sampler) : null,
    user_metadata: stringMetadata(client.userMetadata),
  };
}

/** The SDK types user_metadata as dict[str, str]: other values are written as JSON text. */
function stringMetadata(value: Record<string, unknown> | null): Record<string, string> | null {
  if (!value) return null;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

export async function trainingRun(principal: Principal, modelId: string) {
  return trainingRunDto(await requireTrainingClient(principal, modelId));
}

export async function listTrainingRuns(principal: Principal, page: { limit: number; offset: number }) {
  const { rows, total } = await repo.pageTrainingRuns(await getDb(), {
    entityIds: accessibleEntityIds(principal),
    limit: page.limit,
    offset: page.offset,
  });
  return {
    training_runs: await Promise.all(rows.map(trainingRunDto)),
    cursor: { offset: page.offset, limit: page.limit, total_count: total },
  };
}

export async function listCheckpoints(principal: Principal, modelId: string) {
  const client = await requireTrainingClient(principal, modelId);
  const rows = await repo.listWeightsOfModel(await getDb(), client.modelId);
  return { checkpoints: rows.map(checkpointDto), cursor: null };
}

export async function listUserCheckpoints(principal: Principal, page: { limit: number; offset: number }) {
  const { rows, total } = await repo.pageWeightsInScope(await getDb(), {
    entityIds: accessibleEntityIds(principal),
    limit: page.limit,
    offset: page.offset,
  });
  return {
    checkpoints: rows.map(checkpointDto),
    cursor: { offset: page.offset, limit: page.limit, total_count: total },
  };
}

/** The REST routes name saves `<type>/<name>` under a training run. */
async function resolveByCheckpointId(principal: Principal, modelId: string, type: string, name: string) {
  if (type !== 'weights' && type !== 'sampler_weights') throw ApiError.notFound(`Unknown checkpoint type ${type}`);
  return resolveWeights(principal, formatTinkerPath({ model_id: modelId, kind: type, name }));
}

/** Deletes a save (and, for sampler weights, its checkpoint of the model); owners and admins of a team only. */
export async function deleteSaved(principal: Principal, modelId: string, type: string, name: string) {
  const { client, row } = await resolveByCheckpointId(principal, modelId, type, name);
  requirePermission(principal, client.entityId, 'delete_checkpoints');
  const after = afterCommit();
  await (await getDb()).transaction((tx) => dropSaved(tx, row, after));
  await runAfterCommit(after);
}

const LINK_TTL_MS = 15 * 60_000;
const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/**
 * A download link for a save, valid for 15 minutes, that a plain HTTP client can follow without the API key (the
 * SDK's archive route answers with a redirect to it, as Thinking Machines' answers with a signed storage URL).
 */
export async function archiveLink(principal: Principal, modelId: string, type: string, name: string, origin: string) {
  const { row } = await resolveByCheckpointId(principal, modelId, type, name);
  const token = crypto.randomBytes(24).toString('base64url');
  const expiresAt = new Date(Date.now() + LINK_TTL_MS);
  const db = await getDb();
  await repo.deleteExpiredArchiveLinks(db, new Date());
  await repo.insertArchiveLink(db, { tokenHash: hashToken(token), weightsId: row.id, expiresAt });
  return { url: `${origin}/api/v1/archives/${token}`, expires: expiresAt };
}

/** The tar a download link names: the save's files at the archive's top level, as the cookbook extracts them. */
export async function openArchive(token: string) {
  const row = await repo.findArchiveLink(await getDb(), hashToken(token), new Date());
  if (!row) throw ApiError.notFound('This download link is unknown or has expired (links last 15 minutes)');
  const names: WeightFile[] = ['adapter_config.json', 'adapter_model.safetensors'];
  if (row.kind === 'training') names.push('optimizer.safetensors');
  const entries = [];
  for (const file of names) {
    const key = `${row.prefix}/${file}`;
    const artifact = await artifactWebStream(key);
    if (!artifact) throw new ApiError('internal', `${file} of these weights is missing from the artifact store`);
    await artifact.stream.cancel();
    entries.push({
      name: file,
      size: artifact.size,
      open: async () => {
        const a = await artifactWebStream(key);
        if (!a) throw new Error(`${key} vanished during the download`);
        return a.stream;
      },
    });
  }
  return {
    filename: `${row.name}.tar`,
    body: tarStream(entries),
    size: tarSize(entries),
  };
}

/**
 * The payload of a save request (docs/tinker.md §3.2). A training state's name must be new unless `overwrite`
 * (save_state's flag); sampler weights of an existing name replace them. No name: an unnamed sampler save
 * (save_weights_and_get_sampling_client), kept among the latest few only.
 */
export async function savePayload(
  client: repo.TrainingClientRow,
  s: {
    kind: WeightsKind;
    name: string | null;
    ttlSeconds: number | null;
    overwrite: boolean;
    samplingSessionSeqId: number | null;
  },
) {
  if (
    s.kind === 'training' &&
    s.name &&
    !s.overwrite &&
    (await repo.findWeights(await getDb(), client.modelId, 'training', s.name))
  ) {
    throw new ApiError(
      'bad_request',
      `A training state named ${s.name} already exists for this training client (${tinkerPath(client.modelId, 'training', s.name)}); choose another name or pass overwrite=True`,
    );
  }
  return {
    name: s.name,
    tuneboard: {
      name: s.name,
      ttl_seconds: s.ttlSeconds,
      sampling_session_seq_id: s.samplingSessionSeqId,
    },
  };
}
