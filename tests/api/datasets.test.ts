import { describe, expect, it } from 'vitest';
import * as datasetsRoute from '@/app/v1/preview/datasets/route';
import * as sftRoute from '@/app/v1/preview/sft-training-jobs/route';
import * as jobRoute from '@/app/v1/preview/training-jobs/[training_job_id]/route';
import { datasetListSchema, datasetSchema } from '@/lib/schemas/datasets';
import { trainingJobSchema } from '@/lib/schemas/training-jobs';
import { call, createModel, createUser, type TestUser } from '../support/helpers';
import { postDataset } from '../support/datasets';

const line = (q: string, a: string) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: q },
      { role: 'assistant', content: a },
    ],
  });
const goodJsonl = [line('2+2?', '4'), '', line('3+3?', '6')].join('\n') + '\n';

async function upload(
  user: TestUser,
  query: Record<string, string>,
  body: BodyInit,
  headers: Record<string, string> = {},
) {
  const res = await postDataset(user, query, body, headers);
  return { status: res.status, body: await res.json() };
}

describe('POST /v1/preview/datasets', () => {
  it('stores a raw JSONL body as version 0, then 1, and the URL trains an SFT job', async () => {
    const user = await createUser();
    const first = await upload(user, { project: 'sft', name: 'arith' }, goodJsonl);
    expect(first.status).toBe(201);
    const ds = datasetSchema.parse(first.body);
    expect(ds).toMatchObject({ version: 0, num_examples: 2, files: [{ name: 'train.jsonl', size: goodJsonl.length }] });
    expect(ds.training_data_url).toBe(`wandb-artifact:///${user.handle}/sft/arith:v0`);
    const second = await upload(user, { project: 'sft', name: 'arith' }, goodJsonl);
    expect(second.body.version).toBe(1);

    const model = await createModel(user);
    const job = await call(sftRoute, 'POST', '/v1/preview/sft-training-jobs', {
      key: user.key,
      body: { model_id: model.id, training_data_url: ds.training_data_url, config: { batch_size: 'auto' } },
    });
    expect(job.status).toBe(200);
    const got = await call(jobRoute, 'GET', '/x', { key: user.key, params: { training_job_id: job.body.id } });
    expect(trainingJobSchema.parse(got.body)).toMatchObject({
      type: 'sft',
      status: 'QUEUED',
      config: { num_examples: 2, batch_size: 2 },
    });

    const list = await call(datasetsRoute, 'GET', '/v1/preview/datasets', { key: user.key, query: { project: 'sft' } });
    expect(datasetListSchema.parse(list.body).data.map((d) => d.version)).toEqual([1, 0]);
  });

  it('accepts multipart with trajectories.jsonl and metadata.json', async () => {
    const user = await createUser();
    const form = new FormData();
    form.append('file', new Blob([goodJsonl]), 'trajectories.jsonl');
    form.append('file', new Blob([JSON.stringify({ format: 'jsonl', num_trajectories: 2 })]), 'metadata.json');
    const res = await upload(user, { project: 'sft', name: 'multi' }, form);
    expect(res.status).toBe(201);
    expect(res.body.files.map((f: { name: string }) => f.name)).toEqual(['trajectories.jsonl', 'metadata.json']);
    expect(res.body.num_examples).toBe(2);
  });

  it('rejects a bad line with its file and line number, and keeps no version', async () => {
    const user = await createUser();
    const bad = [line('a', 'b'), JSON.stringify({ messages: [{ role: 'user', content: 'no answer' }] })].join('\n');
    const res = await upload(user, { project: 'sft', name: 'bad' }, bad);
    expect(res.status).toBe(422);
    expect(res.body.detail[0].msg).toBe('Value error, train.jsonl line 2: last message must have role "assistant"');
    const list = await call(datasetsRoute, 'GET', '/v1/preview/datasets', { key: user.key });
    expect(list.body.data).toEqual([]);
  });

  it('names every bad line in one answer, as the form does, and counts those past the list', async () => {
    const user = await createUser();
    const noAnswer = JSON.stringify({ messages: [{ role: 'user', content: 'no answer' }] });
    const bad = [line('a', 'b'), noAnswer, '{', line('c', 'd'), '[]'].join('\n');
    const res = await upload(user, { project: 'sft', name: 'bad' }, bad);
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { msg: string }) => d.msg)).toEqual([
      'Value error, train.jsonl line 2: last message must have role "assistant"',
      expect.stringMatching(/^Value error, train\.jsonl line 3: invalid JSON/),
      'Value error, train.jsonl line 5: expected a JSON object',
    ]);
    // 25 bad lines: 20 listed, the other 5 counted.
    const many = Array.from({ length: 25 }, () => noAnswer).join('\n');
    const res2 = await upload(user, { project: 'sft', name: 'bad' }, many);
    expect(res2.status).toBe(422);
    expect(res2.body.detail).toHaveLength(21);
    expect(res2.body.detail[19].msg).toMatch(/line 20:/);
    expect(res2.body.detail[20].msg).toBe('Value error, train.jsonl: 5 more bad lines not listed');
  });

  it('rejects uploads without a .jsonl file, with no body, or over the size limit', async () => {
    const user = await createUser();
    expect((await upload(user, { project: 'p', name: 'n', filename: 'notes.txt' }, 'hello')).status).toBe(422);
    expect((await upload(user, { name: 'n' }, goodJsonl)).status).toBe(422);
    const before = process.env.TUNEBOARD_MAX_BODY_MB;
    process.env.TUNEBOARD_MAX_BODY_MB = '1';
    try {
      const big = `${line('q', 'a'.repeat(1024 * 1024))}\n`;
      const res = await upload(user, { project: 'p', name: 'big' }, new Blob([big]).stream(), {});
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ detail: 'Request body too large: the limit is TUNEBOARD_MAX_BODY_MB' });
    } finally {
      if (before === undefined) delete process.env.TUNEBOARD_MAX_BODY_MB;
      else process.env.TUNEBOARD_MAX_BODY_MB = before;
    }
  });

  it("never resolves another user's dataset", async () => {
    const owner = await createUser();
    const other = await createUser();
    const ds = await upload(owner, { project: 'sft', name: 'private' }, goodJsonl);
    const model = await createModel(other);
    const res = await call(sftRoute, 'POST', '/v1/preview/sft-training-jobs', {
      key: other.key,
      body: { model_id: model.id, training_data_url: ds.body.training_data_url },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].msg).toContain('Training data artifact not found');
  });
});
