import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as autoEvalRoute from '@/app/v1/preview/models/[model_id]/auto-eval/route';
import * as modelRoute from '@/app/v1/preview/models/[model_id]/route';
import * as evalRunsRoute from '@/app/v1/preview/eval-runs/route';
import * as evalRunRoute from '@/app/v1/preview/eval-runs/[eval_run_id]/route';
import * as historyRoute from '@/app/v1/preview/models/[model_id]/history/route';
import * as rlJobsRoute from '@/app/v1/preview/training-jobs/route';
import * as sftRoute from '@/app/v1/preview/sft-training-jobs/route';
import * as modelJobsRoute from '@/app/v1/preview/models/[model_id]/training-jobs/route';
import { completeJob } from '@/lib/jobs/server/queue';
import { autoEvalResponseSchema, evalRunListSchema, evalRunSchema } from '@/lib/schemas/evals';
import { modelDetailSchema } from '@/lib/schemas/evals';
import { historySchema } from '@/lib/schemas/trajectories';
import { startEvalRunner, stopEvalRunner } from '@/lib/services/eval-runner';
import { inProcessProtocol } from '@/tests/support/in-process-protocol';
import { claimOnly } from '../jobs/claim-only';
import { call, createModel, createUser, until, type TestUser } from '../support/helpers';
import { createEvalSet, evalLine } from '../support/evals';
import { postDataset } from '../support/datasets';

vi.setConfig({ testTimeout: 180_000 });
beforeAll(() => startEvalRunner({ embeddedDatabase: true }));
afterAll(() => stopEvalRunner());

const put = (user: TestUser, modelId: string, body: unknown) =>
  call(autoEvalRoute, 'PUT', '/x', { key: user.key, params: { model_id: modelId }, body });

describe('PUT/GET /v1/preview/models/{id}/auto-eval', () => {
  it('stores the setting with the scorers named and the sampling filled in, shows it on the model, and null switches it off', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const set = await createEvalSet(user, [evalLine('a', 'b')]);
    const res = await put(user, model.id, {
      eval_set_id: set.id,
      scorers: [{ type: 'contains' }, { type: 'regex', name: 'num', pattern: '\\d' }],
      sampling: { max_tokens: 8 },
      n: 2,
    });
    expect(res.status).toBe(200);
    const expected = {
      eval_set_id: set.id,
      scorers: [
        { type: 'contains', name: 'contains' },
        { type: 'regex', name: 'num', pattern: '\\d' },
      ],
      sampling: { temperature: 0, max_tokens: 8, top_p: 1, seed: 0 },
      n: 2,
    };
    expect(autoEvalResponseSchema.parse(res.body)).toEqual({ auto_eval: expected });
    const got = await call(autoEvalRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    expect(got.body).toEqual({ auto_eval: expected });
    const shown = await call(modelRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    expect(modelDetailSchema.parse(shown.body).auto_eval).toEqual(expected);

    const off = await put(user, model.id, null);
    expect(off.body).toEqual({ auto_eval: null });
    const after = await call(modelRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    expect(after.body.auto_eval).toBeNull();
  });

  it('answers 422 for a bad scorer, an unknown judge or set, and 404 for another user’s model', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const set = await createEvalSet(user, [evalLine('a', 'b')]);
    const regex = await put(user, model.id, { eval_set_id: set.id, scorers: [{ type: 'regex', pattern: '(' }] });
    expect(regex.status).toBe(422);
    expect(regex.body.detail[0].loc).toEqual(['body', 'scorers', 0, 'pattern']);
    const judge = await put(user, model.id, {
      eval_set_id: set.id,
      scorers: [{ type: 'judge', model: 'nope/nope/nope', rubric: 'r' }],
    });
    expect(judge.status).toBe(422);
    expect(judge.body.detail[0].loc).toEqual(['body', 'scorers', 0, 'model']);
    const other = await createUser();
    const foreignSet = await createEvalSet(other, [evalLine('a', 'b')]);
    const unknownSet = await put(user, model.id, { eval_set_id: foreignSet.id, scorers: [{ type: 'contains' }] });
    expect(unknownSet.status).toBe(422);
    expect(unknownSet.body.detail[0].loc).toEqual(['body', 'eval_set_id']);
    const foreign = await put(other, model.id, { eval_set_id: foreignSet.id, scorers: [{ type: 'contains' }] });
    expect(foreign.status).toBe(404);
    const foreignGet = await call(autoEvalRoute, 'GET', '/x', { key: other.key, params: { model_id: model.id } });
    expect(foreignGet.status).toBe(404);
  });
});

describe('every new checkpoint of an auto-evaluated model', () => {
  it('queues one eval run when a job completes, which runs and charts at the checkpoint step', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const set = await createEvalSet(user, [evalLine('2+2?', '4'), evalLine('Hi', 'hi')]);
    // Set with the RL job itself, as a client would.
    const submitted = await call(rlJobsRoute, 'POST', '/v1/preview/training-jobs', {
      key: user.key,
      body: {
        model_id: model.id,
        trajectory_groups: [],
        eval: {
          eval_set_id: set.id,
          scorers: [{ type: 'regex', name: 'any', pattern: '[\\s\\S]*' }],
          sampling: { max_tokens: 4 },
        },
      },
    });
    expect(submitted.status).toBe(200);
    const worker = `test:${model.id}`;
    const protocol = claimOnly(inProcessProtocol(worker), model.id);
    const job = await protocol.claim();
    expect(job?.id).toBe(submitted.body.id);
    await protocol.appendEvents(job!.id, [
      { type: 'training_started', data: { num_sequences: 1 } },
      { type: 'gradient_step', data: { loss: 1 } },
    ]);
    const { step } = await completeJob(job!.id, worker, { artifactKey: null });
    expect(step).toBe(1);

    const list = await call(evalRunsRoute, 'GET', '/v1/preview/eval-runs', {
      key: user.key,
      query: { model_id: model.id },
    });
    const [run] = evalRunListSchema.parse(list.body).data;
    expect(run).toMatchObject({
      name: 'auto: step 1',
      eval_set_id: set.id,
      targets: [{ name: `${model.entity}/${model.project}/${model.name}:step1`, model_id: model.id, step: 1 }],
      scorers: [{ type: 'regex', name: 'any' }],
      progress: { total: 2 },
    });
    let last: unknown;
    const done = await until(async () => {
      const got = evalRunSchema.parse(
        (await call(evalRunRoute, 'GET', '/x', { key: user.key, params: { eval_run_id: run.id } })).body,
      );
      last = got;
      return got.status === 'COMPLETED';
    }, 90_000);
    expect(done, JSON.stringify(last)).toBe(true);
    const history = historySchema.parse(
      (await call(historyRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } })).body,
    );
    expect(history.series.find((s) => s.name === `eval/${set.name}/any`)?.points).toEqual([[1, 1]]);
  });

  it('takes `eval` on SFT job creation, and refuses a bad one without creating the job', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const set = await createEvalSet(user, [evalLine('a', 'b')]);
    const data = JSON.stringify({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ],
    });
    const uploaded = await postDataset(user, { project: 'p', name: 'd' }, data + '\n');
    const url = (await uploaded.json()).training_data_url as string;
    const bad = await call(sftRoute, 'POST', '/v1/preview/sft-training-jobs', {
      key: user.key,
      body: {
        model_id: model.id,
        training_data_url: url,
        eval: { eval_set_id: set.id, scorers: [{ type: 'json_schema', schema: { type: 7 } }] },
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'eval', 'scorers', 0, 'schema']);
    const jobs = await call(modelJobsRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    expect(jobs.body.data).toEqual([]);

    const ok = await call(sftRoute, 'POST', '/v1/preview/sft-training-jobs', {
      key: user.key,
      body: {
        model_id: model.id,
        training_data_url: url,
        eval: { eval_set_id: set.id, scorers: [{ type: 'exact_match' }] },
      },
    });
    expect(ok.status).toBe(200);
    const setting = await call(autoEvalRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    expect(setting.body.auto_eval).toMatchObject({
      eval_set_id: set.id,
      scorers: [{ type: 'exact_match', name: 'exact_match' }],
      n: 1,
    });
  });
});
