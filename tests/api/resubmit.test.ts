import { describe, expect, it } from 'vitest';
import * as sftRoute from '@/app/v1/preview/sft-training-jobs/route';
import * as jobRoute from '@/app/v1/preview/training-jobs/[training_job_id]/route';
import * as cancelRoute from '@/app/v1/preview/training-jobs/[training_job_id]/cancel/route';
import * as resubmitRoute from '@/app/v1/preview/training-jobs/[training_job_id]/resubmit/route';
import * as trajectoriesRoute from '@/app/v1/preview/models/[model_id]/trajectories/route';
import * as queue from '@/lib/jobs/server/queue';
import { loadTrainingExamples } from '@/lib/services/datasets';
import { deleteArtifacts } from '@/lib/storage';
import { call, createModel, createRlJob, createUser, type TestUser } from '../support/helpers';
import { postDataset } from '../support/datasets';

const example = (q: string, a: string) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: q },
      { role: 'assistant', content: a },
    ],
  });

async function sftJob(user: TestUser, modelId: string) {
  const up = await postDataset(
    user,
    { project: 'p', name: 'resubmit' },
    [example('a', 'b'), example('c', 'd')].join('\n'),
  );
  expect(up.status).toBe(201);
  const dataset = await up.json();
  const created = await call(sftRoute, 'POST', '/x', {
    key: user.key,
    body: {
      model_id: modelId,
      training_data_url: dataset.training_data_url,
      config: { batch_size: 1, learning_rate: 1e-3, epochs: 2 },
    },
  });
  expect(created.status).toBe(200);
  return { jobId: created.body.id as string, dataset };
}

const resubmit = (user: TestUser, jobId: string) =>
  call(resubmitRoute, 'POST', '/x', { key: user.key, params: { training_job_id: jobId } });
const cancel = (user: TestUser, jobId: string) =>
  call(cancelRoute, 'POST', '/x', { key: user.key, params: { training_job_id: jobId } });
const getJob = async (user: TestUser, jobId: string) =>
  (await call(jobRoute, 'GET', '/x', { key: user.key, params: { training_job_id: jobId } })).body;

describe('POST /v1/preview/training-jobs/{id}/resubmit', () => {
  it('queues a failed SFT job again with the same data and settings, leaving the failed one as it was', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const { jobId } = await sftJob(user, model.id);
    // Not failed yet: nothing to resubmit.
    const early = await resubmit(user, jobId);
    expect(early.status).toBe(409);
    expect(early.body.detail).toBe('Only a failed or cancelled job can be resubmitted; this one is queued');
    expect((await cancel(user, jobId)).status).toBe(200);
    const failed = await getJob(user, jobId);

    const res = await resubmit(user, jobId);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: 'sft', model_id: model.id, status: 'QUEUED', completed_steps: 0 });
    expect(res.body.id).not.toBe(jobId);
    const { resubmitted_from, ...config } = res.body.config;
    expect(resubmitted_from).toBe(jobId);
    expect(config).toEqual(failed.config);
    expect(await getJob(user, jobId)).toEqual(failed);

    // The new job trains on the same examples.
    const claimed = await queue.claimJob('test:resubmit', ['sft'], [model.id]);
    expect(claimed?.id).toBe(res.body.id);
    const input = await queue.jobInput(res.body.id, 'test:resubmit', loadTrainingExamples);
    expect(input).toMatchObject({ kind: 'sft', examples: [{ line: 1 }, { line: 2 }] });
  });

  it('says why when the dataset is gone, and hides other users’ jobs', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const { jobId } = await sftJob(user, model.id);
    await cancel(user, jobId);
    const stranger = await createUser();
    expect((await resubmit(stranger, jobId)).status).toBe(404);
    expect((await resubmit(user, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await resubmit(user, 'not-a-uuid')).status).toBe(404);
    await deleteArtifacts('datasets');
    const gone = await resubmit(user, jobId);
    expect(gone.status).toBe(422);
    expect(gone.body.detail[0]).toMatchObject({
      loc: ['path', 'training_job_id'],
      msg: "Value error, The job's training data cannot be used: Training data file train.jsonl is missing",
    });
  });

  it('repeats an RL job on the groups stored with it, without recording them twice', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const group = {
      trajectories: [
        {
          messages_and_choices: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: 'a' },
          ],
          reward: 1,
        },
        {
          messages_and_choices: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: 'b' },
          ],
          reward: 0,
        },
      ],
    };
    const jobId = await createRlJob(user, model.id, { trajectory_groups: [group] });
    await cancel(user, jobId);
    const res = await resubmit(user, jobId);
    expect(res.status).toBe(201);
    expect(res.body.config).toMatchObject({ input_job_id: jobId, resubmitted_from: jobId, num_groups: 1 });
    const claimed = await queue.claimJob('test:rl-resubmit', ['rl'], [model.id]);
    expect(claimed?.id).toBe(res.body.id);
    const input = await queue.jobInput(res.body.id, 'test:rl-resubmit', loadTrainingExamples);
    expect(input.kind === 'rl' && input.trajectory_groups).toHaveLength(1);
    expect(JSON.stringify(input)).toContain('"reward":1');
    const listed = await call(trajectoriesRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    expect(listed.body.data).toHaveLength(1);
  });
});
