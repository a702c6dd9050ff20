import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalArtifactStore } from '@/lib/storage/local';
import { S3ArtifactStore } from '@/lib/storage/s3';
import type { ArtifactStore } from '@/lib/storage/types';
import * as datasetsRoute from '@/app/v1/preview/datasets/route';
import * as sftRoute from '@/app/v1/preview/sft-training-jobs/route';
import { call, createModel, createUser } from './support/helpers';

/** The same contract for both backends; S3 is exercised against s3rver, an S3-compatible server on loopback. */
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-store-'));
let s3rver: S3rver;
let s3: S3ArtifactStore;
let s3Port = 0;

beforeAll(async () => {
  s3rver = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: path.join(root, 's3rver'),
    configureBuckets: [{ name: 'artifacts', configs: [] }],
  });
  const { port } = await s3rver.run();
  s3Port = port;
  s3 = new S3ArtifactStore({
    endpoint: `http://127.0.0.1:${port}`,
    bucket: 'artifacts',
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    prefix: 'tuneboard',
  });
});

afterAll(async () => {
  await s3rver?.close();
});

const backends: [string, () => ArtifactStore][] = [
  ['local directory', () => new LocalArtifactStore(path.join(root, 'local'))],
  ['S3-compatible', () => s3],
];

describe.each(backends)('artifact store: %s', (_name, get) => {
  it('puts, reads, lists and deletes by prefix', async () => {
    const store = get();
    await store.put('models/m1/checkpoints/j1/model.safetensors', new Uint8Array([1, 2, 3]));
    await store.put('models/m1/checkpoints/j2/model.safetensors', 'abc');
    await store.put('models/m2/x', 'keep');
    expect(await store.readBytes('models/m1/checkpoints/j1/model.safetensors')).toEqual(new Uint8Array([1, 2, 3]));
    expect(await store.list('models/m1/checkpoints')).toEqual(['j1', 'j2']);
    expect(await store.exists('models/m1/checkpoints/j2/model.safetensors')).toBe(true);
    await store.deletePrefix('models/m1');
    expect(await store.list('models/m1/checkpoints')).toEqual([]);
    expect(await store.readBytes('models/m1/checkpoints/j1/model.safetensors')).toBeUndefined();
    expect(await store.readBytes('models/m2/x')).toEqual(new TextEncoder().encode('keep'));
  });

  it('streams uploads under a byte limit and keeps nothing past it', async () => {
    const store = get();
    const size = await store.putStream(
      'datasets/d/train.jsonl',
      Readable.from([Buffer.from('a\nb\r\n'), Buffer.from('c')]),
      {
        limit: 100,
        onLimit: () => new Error('too large'),
      },
    );
    expect(size).toBe(6);
    expect(new TextDecoder().decode(await store.readBytes('datasets/d/train.jsonl'))).toBe('a\nb\r\nc');
    await expect(
      store.putStream('datasets/big/train.jsonl', Readable.from([Buffer.alloc(60), Buffer.alloc(60)]), {
        limit: 100,
        onLimit: () => new Error('too large'),
      }),
    ).rejects.toThrow('too large');
    expect(await store.exists('datasets/big/train.jsonl')).toBe(false);
    const streamed = await store.webStream('datasets/d/train.jsonl');
    expect(streamed?.size).toBe(6);
    expect(await new Response(streamed!.stream).text()).toBe('a\nb\r\nc');
  });
});

describe('the API on S3-compatible storage', () => {
  it('uploads a dataset to S3 and validates it from there when a job is created', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      TUNEBOARD_S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
      TUNEBOARD_S3_BUCKET: 'artifacts',
      TUNEBOARD_S3_ACCESS_KEY_ID: 'S3RVER',
      TUNEBOARD_S3_SECRET_ACCESS_KEY: 'S3RVER',
      TUNEBOARD_S3_PREFIX: 'api-test',
    });
    try {
      const user = await createUser();
      const line = JSON.stringify({
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: 'a' },
        ],
      });
      const url = new URL('http://localhost:3000/v1/preview/datasets?project=p&name=d');
      const res = await datasetsRoute.POST(
        new Request(url, {
          method: 'POST',
          body: `${line}\n${line}\n`,
          headers: { authorization: `Bearer ${user.key}` },
        }),
        { params: Promise.resolve({}) },
      );
      expect(res.status).toBe(201);
      const dataset = await res.json();
      // The files are in the bucket under the configured prefix, not on local disk.
      const inBucket = new S3ArtifactStore({
        endpoint: `http://127.0.0.1:${s3Port}`,
        bucket: 'artifacts',
        region: 'us-east-1',
        accessKeyId: 'S3RVER',
        secretAccessKey: 'S3RVER',
        prefix: 'api-test',
      });
      const [folder] = await inBucket.list('datasets');
      expect(await inBucket.list(`datasets/${folder}`)).toEqual(['train.jsonl']);
      const model = await createModel(user);
      const job = await call(sftRoute, 'POST', '/v1/preview/sft-training-jobs', {
        key: user.key,
        body: { model_id: model.id, training_data_url: dataset.training_data_url },
      });
      expect(job.status).toBe(200);
    } finally {
      process.env = saved;
    }
  });
});
