import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ArtifactStore } from '@/lib/storage/s3';

/**
 * The compose stack's S3 store (deploy/s3/server.mjs): Tuneboard's own S3 client works against it with the key pair
 * from .env, and nobody else gets in. s3rver alone takes unsigned requests, its built-in S3RVER key, and any
 * Signature Version 4 signature at all (it checks only the access key id), so each of those is tried here.
 */
const ROOT = path.join(import.meta.dirname, '..', '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-s3-store-'));
let child: ChildProcess;
let endpoint = '';

const store = (secretAccessKey: string, accessKeyId = 'team-key') =>
  new S3ArtifactStore({ endpoint, bucket: 'tuneboard', region: 'us-east-1', accessKeyId, secretAccessKey });

beforeAll(async () => {
  child = spawn(process.execPath, [path.join(ROOT, 'deploy', 's3', 'server.mjs')], {
    env: {
      ...process.env,
      S3_BUCKET: 'tuneboard',
      S3_ACCESS_KEY_ID: 'team-key',
      S3_SECRET_ACCESS_KEY: 'the team secret',
      S3_DIRECTORY: dir,
      S3_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The server prints one JSON line once it listens.
  for await (const line of createInterface({ input: child.stdout! })) {
    const msg = JSON.parse(line) as { port?: number };
    if (msg.port) {
      endpoint = `http://127.0.0.1:${msg.port}`;
      break;
    }
  }
});

afterAll(() => {
  child?.kill();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the compose stack S3 store', () => {
  it('serves Tuneboard with the .env key pair, in the bucket it created at start', async () => {
    const s3 = store('the team secret');
    const key = 'models/m1/checkpoints/j1/model.safetensors';
    expect(await s3.put(key, 'weights')).toBe(7);
    await s3.put('datasets/d1/v0/train data+1.jsonl', '{"a":1}\n{"a":2}\n');
    expect(new TextDecoder().decode(await s3.readBytes(key))).toBe('weights');
    expect(await s3.list('models/m1/checkpoints')).toEqual(['j1']);
    // A key with a space and a plus reads back as written (the dataset files' names allow them).
    expect(new TextDecoder().decode(await s3.readBytes('datasets/d1/v0/train data+1.jsonl'))).toBe(
      '{"a":1}\n{"a":2}\n',
    );
    await s3.deletePrefix('models/m1');
    expect(await s3.exists(key)).toBe(false);
    // The files are plain files under the volume, which is what deploy/smoke.sh looks for.
    expect(
      fs.existsSync(path.join(dir, 'tuneboard', 'datasets', 'd1', 'v0', 'train data+1.jsonl._S3rver_object')),
    ).toBe(true);
  });

  it('refuses a wrong secret, the S3RVER key and unsigned requests', async () => {
    await expect(store('a wrong secret').put('x', 'y')).rejects.toThrow(/403/);
    await expect(store('S3RVER', 'S3RVER').put('x', 'y')).rejects.toThrow(/403/);
    const unsigned = await fetch(`${endpoint}/tuneboard/?list-type=2`);
    expect(unsigned.status).toBe(403);
    expect(await unsigned.text()).toContain('AWS4-HMAC-SHA256 Authorization header is required');
    expect(await store('the team secret').exists('x')).toBe(false);
    expect((await fetch(`${endpoint}/_health`)).status).toBe(200);
  });
});
