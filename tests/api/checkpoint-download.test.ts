import { describe, expect, it } from 'vitest';
import * as downloadRoute from '@/app/v1/preview/models/[model_id]/checkpoints/[step]/download/route';
import { BASE_MODELS } from '@/lib/engine/base-models';
import { decodeModel } from '@/lib/engine/safetensors';
import { getDb } from '@/lib/db/client';
import { insertCheckpoint } from '@/lib/db/repositories/models';
import { putArtifact } from '@/lib/storage';
import { createModel, createUser, TEST_BASE_MODEL } from '../support/helpers';

async function download(key: string, modelId: string, step: string, format?: string) {
  const res = await downloadRoute.GET(
    new Request(
      `http://localhost/v1/preview/models/${modelId}/checkpoints/${step}/download${format ? `?format=${format}` : ''}`,
      {
        headers: { authorization: `Bearer ${key}` },
      },
    ),
    { params: Promise.resolve({ model_id: modelId, step }) },
  );
  return res;
}

describe('GET /v1/preview/models/{id}/checkpoints/{step}/download', () => {
  it('serves step 0 as the base model’s weights, loadable with its config', async () => {
    const user = await createUser();
    const model = await createModel(user, { name: 'dl' });
    const res = await download(user.key, model.id, '0');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="dl-step0.safetensors"');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const weights = decodeModel(bytes);
    expect(weights.config).toEqual(BASE_MODELS[TEST_BASE_MODEL].config);
    weights.release();

    const gguf = await download(user.key, model.id, '0', 'gguf');
    expect(gguf.headers.get('content-disposition')).toBe('attachment; filename="dl-step0.gguf"');
    const ggufBytes = new Uint8Array(await gguf.arrayBuffer());
    expect(new TextDecoder().decode(ggufBytes.subarray(0, 4))).toBe('GGUF');
    expect((await download(user.key, model.id, '0', 'onnx')).status).toBe(422);
  });

  it('streams a trained checkpoint’s own artifact, and 404s for unknown steps and strangers', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const key = `models/${model.id}/checkpoints/test/model.safetensors`;
    await putArtifact(key, new Uint8Array([1, 2, 3, 4]));
    const db = await getDb();
    await insertCheckpoint(db, { modelId: model.id, step: 1, metrics: {}, artifactKey: key });
    const res = await download(user.key, model.id, '1');
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array([1, 2, 3, 4]));
    expect((await download(user.key, model.id, '7')).status).toBe(404);
    expect((await download(user.key, model.id, 'x')).status).toBe(404);
    const stranger = await createUser();
    expect((await download(stranger.key, model.id, '1')).status).toBe(404);
  });
});
