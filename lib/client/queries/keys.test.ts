import { describe, expect, it } from 'vitest';
import { abVoteKeys } from './ab-votes';
import { accountKeys } from './accounts';
import { checkpointKeys } from './checkpoints';
import { datasetKeys } from './datasets';
import { evalKeys } from './evals';
import { historyKeys } from './history';
import { jobEventKeys } from './job-events';
import { jobKeys } from './jobs';
import { baseModelKeys, chatModelKeys, modelKeys, projectKeys } from './models';
import { openApiKeys } from './openapi';
import { tinkerKeys } from './tinker';
import { trajectoryKeys } from './trajectories';
import { usageKeys } from './usage';
import { trainingWorkerKeys } from './workers';

const startsWith = (key: readonly unknown[], prefix: readonly unknown[]) =>
  expect(key.slice(0, prefix.length)).toEqual(prefix);

describe('query keys', () => {
  // The cache keys are what the server pages hydrate under and what mutations invalidate by prefix: a key that
  // changes its shape silently stops a refresh, so each one is pinned to the value it had in query-keys.ts.
  it('keep their values', () => {
    expect(accountKeys.session()).toEqual(['session']);
    expect(accountKeys.apiKeys.list()).toEqual(['api-keys', 'list']);
    expect(accountKeys.teams.list()).toEqual(['teams', 'list']);
    expect(modelKeys.list({ entity: 'e', search: '' })).toEqual(['models', 'list', { entity: 'e', search: '' }]);
    expect(modelKeys.summary('m')).toEqual(['models', 'detail', 'm', 'summary']);
    expect(modelKeys.picker(null)).toEqual(['models', 'picker', null]);
    expect(projectKeys.list('e')).toEqual(['projects', 'list', 'e']);
    expect(baseModelKeys.all()).toEqual(['base-models']);
    expect(chatModelKeys.all()).toEqual(['chat-models']);
    expect(checkpointKeys.page('m', undefined)).toEqual(['models', 'detail', 'm', 'checkpoints', 'page', null]);
    expect(checkpointKeys.every('m')).toEqual(['models', 'detail', 'm', 'checkpoints', 'all']);
    expect(checkpointKeys.picker('m')).toEqual(['models', 'checkpoints-picker', 'm']);
    expect(historyKeys.trainingCurve('m')).toEqual(['models', 'detail', 'm', 'history', 'gradient_step']);
    expect(historyKeys.range('m', 'checkpoint', ['a', 'b'], 1, 9)).toEqual([
      'models',
      'detail',
      'm',
      'history',
      'range',
      'checkpoint',
      'a,b',
      1,
      9,
    ]);
    expect(abVoteKeys.all('m')).toEqual(['models', 'detail', 'm', 'ab-votes']);
    expect(jobKeys.ofModel('m')).toEqual(['models', 'detail', 'm', 'jobs']);
    expect(trajectoryKeys.list('m', { step: 3, split: '' })).toEqual([
      'models',
      'detail',
      'm',
      'trajectories',
      { step: 3, split: '' },
    ]);
    expect(trajectoryKeys.steps('m')).toEqual(['models', 'detail', 'm', 'trajectory-steps']);
    expect(tinkerKeys.ofModel('m')).toEqual(['models', 'detail', 'm', 'tinker']);
    expect(tinkerKeys.list('e')).toEqual(['tinker-clients', 'list', 'e']);
    expect(evalKeys.autoEval('m')).toEqual(['models', 'detail', 'm', 'auto-eval']);
    expect(evalKeys.results('r', 'q')).toEqual(['evals', 'run', 'r', 'results', 'q']);
    expect(jobKeys.summary('j')).toEqual(['jobs', 'j', 'summary']);
    expect(jobKeys.entityList('e', { kind: 'active' })).toEqual(['jobs', 'list', 'e', { kind: 'active' }]);
    expect(jobEventKeys.page('j', undefined)).toEqual(['jobs', 'j', 'events', 'page', 'newest', 'all', null]);
    expect(jobEventKeys.page('j', 'c', { newestFirst: false, type: 'gradient_step' })).toEqual([
      'jobs',
      'j',
      'events',
      'page',
      'oldest',
      'gradient_step',
      'c',
    ]);
    expect(jobEventKeys.every('j')).toEqual(['jobs', 'j', 'events', 'all']);
    expect(trainingWorkerKeys.all()).toEqual(['training-workers']);
    expect(usageKeys.list('e', 30)).toEqual(['usage', 'e', 30]);
    expect(datasetKeys.all()).toEqual(['datasets']);
    expect(openApiKeys.document()).toEqual(['openapi', 'document']);
  });

  it("put everything of one model under its detail key, and that under models.all() (a delete's invalidation)", () => {
    const detail = modelKeys.detail('m');
    startsWith(detail, modelKeys.all());
    for (const key of [
      modelKeys.summary('m'),
      checkpointKeys.page('m', 'c'),
      checkpointKeys.every('m'),
      historyKeys.all('m'),
      historyKeys.trainingCurve('m'),
      abVoteKeys.all('m'),
      jobKeys.ofModel('m'),
      trajectoryKeys.steps('m'),
      tinkerKeys.ofModel('m'),
      evalKeys.autoEval('m'),
    ])
      startsWith(key, detail);
    startsWith(checkpointKeys.picker('m'), modelKeys.all());
    startsWith(modelKeys.picker('e'), modelKeys.all());
  });

  it("put a job's events under the job", () => {
    startsWith(jobEventKeys.page('j', undefined), jobEventKeys.all('j'));
    startsWith(jobEventKeys.all('j'), jobKeys.detail('j'));
  });
});
