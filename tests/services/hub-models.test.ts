import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as modelsRoute from '@/app/v1/models/route';
import * as chatRoute from '@/app/v1/chat/completions/route';
import { call, createUser } from '../support/helpers';
import { useBaseModels as registerBaseModels } from '../support/base-models';
import { startHubStandin, writeFakeHubModel, type HubStandin } from '../support/hub-standin';

/**
 * A base model named by its Hub id (no `path`) is fetched by the server into the Hugging Face cache, as
 * huggingface_hub would (issue 43 item 1): progress and errors on /v1/models, 503 with the progress on chat until it
 * is there, the cache's layout (blobs, snapshot links, refs/main) so that a worker on the same machine finds it,
 * HF_TOKEN for gated models, HF_HUB_OFFLINE, and a file that arrives damaged. The weights here are not a working
 * model (tests/real-models/hub-model.test.ts trains and chats with one); the server only checks what it downloads.
 */

let modelDir: string;
let home: string;
let hub: HubStandin | undefined;
const saved = { ...process.env };

beforeAll(() => {
  modelDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-hub-src-'));
  writeFakeHubModel(path.join(modelDir, 'tiny'));
});

afterEach(async () => {
  await hub?.close();
  hub = undefined;
  process.env = { ...saved };
});

afterAll(() => fs.rmSync(modelDir, { recursive: true, force: true }));

async function startHub(opts: Parameters<typeof startHubStandin>[1] = {}, id = 'test-org/tiny') {
  hub = await startHubStandin({ [id]: path.join(modelDir, 'tiny') }, opts);
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-hf-home-'));
  Object.assign(process.env, { HF_ENDPOINT: hub.url, HF_HOME: home });
  delete process.env.HF_HUB_CACHE;
  delete process.env.HF_TOKEN;
  delete process.env.HF_HUB_OFFLINE;
  registerBaseModels([{ id, backend: 'hf' }]);
  return id;
}

type Listed = {
  id: string;
  available: boolean;
  unavailable_reason: string | null;
  download?: { status: string; done_bytes: number | null; total_bytes: number | null; error: string | null };
};

async function listed(key: string, id: string): Promise<Listed> {
  const res = await call(modelsRoute, 'GET', '/v1/models', { key });
  expect(res.status).toBe(200);
  return (res.body.data as Listed[]).find((m) => m.id === id)!;
}

async function waitFor(key: string, id: string, done: (m: Listed) => boolean, seen: Listed[] = []): Promise<Listed> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = await listed(key, id);
    seen.push(m);
    if (done(m)) return m;
    if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('base models named by a Hugging Face Hub id', () => {
  it('downloads for serving with progress on /v1/models, into the cache layout huggingface_hub uses', async () => {
    const id = await startHub({ bytesPerSecond: 6_000_000 }, 'test-org/progress');
    const user = await createUser();
    const first = await listed(user.key, id);
    expect(first.available).toBe(false);
    expect(first.download?.status).toBe('downloading');
    expect(first.unavailable_reason).toMatch(/^it is being downloaded from the Hugging Face Hub \(127\.0\.0\.1:\d+\)/);

    // While it downloads, chat says so with a 503 and Retry-After, never a 500.
    const chat = await call(chatRoute, 'POST', '/v1/chat/completions', {
      key: user.key,
      body: { model: id, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 },
    });
    expect(chat.status).toBe(503);
    expect(JSON.stringify(chat.body)).toMatch(/being downloaded from the Hugging Face Hub/);

    const seen: Listed[] = [];
    const done = await waitFor(user.key, id, (m) => m.download?.status !== 'downloading', seen);
    expect(done.download).toEqual({ status: 'ready', done_bytes: null, total_bytes: null, error: null });
    expect(done.available).toBe(true);
    const progress = seen.filter((m) => m.download?.status === 'downloading').map((m) => m.download!.done_bytes!);
    const total = seen.find((m) => m.download?.total_bytes)?.download?.total_bytes;
    // config, tokenizer files and the weights; not the .bin copy nor the README.
    const wanted = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
    expect(total).toBe(wanted.reduce((n, f) => n + fs.statSync(path.join(modelDir, 'tiny', f)).size, 0));
    expect(new Set(progress).size).toBeGreaterThan(2);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(seen.some((m) => /\(\d+%\)$/.test(m.unavailable_reason ?? ''))).toBe(true);

    // The cache as huggingface_hub lays it out: refs/main → commit, snapshot files linked to blobs.
    const repo = path.join(home, 'hub', 'models--test-org--progress');
    const commit = fs.readFileSync(path.join(repo, 'refs', 'main'), 'utf8');
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    const snapshot = path.join(repo, 'snapshots', commit);
    expect(fs.readdirSync(snapshot).sort()).toEqual(wanted);
    const link = fs.readlinkSync(path.join(snapshot, 'model.safetensors'));
    expect(link).toMatch(/^\.\.\/\.\.\/blobs\/[0-9a-f]{64}$/);
    expect(fs.readFileSync(path.join(snapshot, 'config.json'))).toEqual(
      fs.readFileSync(path.join(modelDir, 'tiny', 'config.json')),
    );
    expect(hub!.requests.filter((r) => r.includes('pytorch_model.bin') || r.includes('README'))).toEqual([]);
  });

  it('serves a complete cached snapshot without asking the Hub, and with HF_HUB_OFFLINE', async () => {
    const id = await startHub({}, 'test-org/cached');
    const user = await createUser();
    await waitFor(user.key, id, (m) => m.available);
    const asked = hub!.requests.length;
    // A new server process would find it in the cache: here, a second cache entry key (offline) reads it.
    process.env.HF_HUB_OFFLINE = '1';
    const offline = await listed(user.key, id);
    expect(offline).toMatchObject({ available: true, download: { status: 'ready' } });
    expect(hub!.requests.length).toBe(asked);
  });

  it('says what to do when the model is not in the cache and HF_HUB_OFFLINE is set', async () => {
    const id = await startHub({}, 'test-org/offline');
    process.env.HF_HUB_OFFLINE = '1';
    const user = await createUser();
    const m = await listed(user.key, id);
    expect(m.available).toBe(false);
    expect(m.download?.status).toBe('failed');
    expect(m.unavailable_reason).toBe(
      `test-org/offline is not in this server's Hugging Face cache (${path.join(home, 'hub')}) and HF_HUB_OFFLINE is set: download it there first (hf download test-org/offline)`,
    );
    expect(hub!.requests).toEqual([]);
  });

  it('sends HF_TOKEN, and says a gated model needs one when it is missing or refused', async () => {
    const id = await startHub({ token: 'hf_secret' }, 'test-org/gated');
    const user = await createUser();
    const failed = await waitFor(user.key, id, (m) => m.download?.status === 'failed');
    expect(failed.unavailable_reason).toBe(
      `could not download test-org/gated from ${hub!.url}: test-org/gated is gated or private (401): set HF_TOKEN where the server runs`,
    );
    process.env.HF_TOKEN = 'hf_secret';
    // A new setting is a new attempt (the failure is otherwise retried after 30 s).
    const ok = await waitFor(user.key, id, (m) => m.available);
    expect(ok.download?.status).toBe('ready');
  });

  it('reads the token file in HF_HOME when HF_TOKEN is unset', async () => {
    const id = await startHub({ token: 'hf_from_file' }, 'test-org/token-file');
    fs.writeFileSync(path.join(home, 'token'), 'hf_from_file\n');
    const user = await createUser();
    expect((await waitFor(user.key, id, (m) => m.download?.status !== 'downloading')).available).toBe(true);
  });

  it('refuses a file that arrives damaged, keeps nothing of it, and names an unknown id', async () => {
    const id = await startHub({ corrupt: 'model.safetensors' }, 'test-org/damaged');
    const user = await createUser();
    const failed = await waitFor(user.key, id, (m) => m.download?.status === 'failed');
    expect(failed.unavailable_reason).toMatch(
      /^could not download test-org\/damaged from .*: model\.safetensors arrived damaged \(sha256 [0-9a-f]{64}, the Hub says [0-9a-f]{64}\)$/,
    );
    const blobs = path.join(home, 'hub', 'models--test-org--damaged', 'blobs');
    expect(fs.readdirSync(blobs).filter((f) => f.endsWith('.incomplete'))).toEqual([]);
    expect(fs.existsSync(path.join(home, 'hub', 'models--test-org--damaged', 'refs', 'main'))).toBe(false);

    registerBaseModels([{ id: 'test-org/missing', backend: 'hf' }]);
    const missing = await waitFor(user.key, 'test-org/missing', (m) => m.download?.status === 'failed');
    expect(missing.unavailable_reason).toBe(
      `could not download test-org/missing from ${hub!.url}: test-org/missing was not found (404): check the id and the revision`,
    );
  });

  it('says when the Hub cannot be reached', async () => {
    await startHub({}, 'test-org/unreachable');
    const port = new URL(hub!.url).port;
    await hub!.close();
    hub = undefined;
    const user = await createUser();
    const m = await waitFor(user.key, 'test-org/unreachable', (x) => x.download?.status === 'failed');
    expect(m.unavailable_reason).toBe(
      `could not download test-org/unreachable from http://127.0.0.1:${port}: the Hub is not reachable (ECONNREFUSED)`,
    );
  });
});
