import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as evalRunsRoute from '@/app/v1/preview/eval-runs/route';
import * as evalRunRoute from '@/app/v1/preview/eval-runs/[eval_run_id]/route';
import * as cancelRoute from '@/app/v1/preview/eval-runs/[eval_run_id]/cancel/route';
import * as eventsRoute from '@/app/v1/preview/eval-runs/[eval_run_id]/events/route';
import * as resultsRoute from '@/app/v1/preview/eval-runs/[eval_run_id]/results/route';
import * as scoresRoute from '@/app/v1/preview/eval-runs/[eval_run_id]/scores/route';
import * as evalSetRoute from '@/app/v1/preview/eval-sets/[eval_set_id]/route';
import * as historyRoute from '@/app/v1/preview/models/[model_id]/history/route';
import { getDb } from '@/lib/db/client';
import { evalResults, evalRuns } from '@/lib/db/schema';
import {
  evalEventListSchema,
  evalResultListSchema,
  evalRunListSchema,
  evalRunSchema,
  type EvalRunDto,
} from '@/lib/schemas/evals';
import { historySchema } from '@/lib/schemas/trajectories';
import { parseJudgeVerdict } from '@/lib/services/eval-scorers';
import { startEvalRunner, stopEvalRunner } from '@/lib/services/eval-runner';
import {
  call,
  createModel,
  createUser,
  seedCheckpoints,
  TEST_BASE_MODEL,
  until,
  type TestUser,
} from '../support/helpers';
import { createEvalSet, evalLine } from '../support/evals';

// Runs generate on the tiny CPU model: a run takes seconds, more on a loaded machine.
vi.setConfig({ testTimeout: 180_000 });
beforeAll(() => startEvalRunner({ embeddedDatabase: true }));
afterAll(() => stopEvalRunner());

async function startRun(user: TestUser, body: Record<string, unknown>) {
  return call(evalRunsRoute, 'POST', '/v1/preview/eval-runs', { key: user.key, body });
}

async function getRun(user: TestUser, id: string): Promise<EvalRunDto> {
  const res = await call(evalRunRoute, 'GET', '/x', { key: user.key, params: { eval_run_id: id } });
  expect(res.status).toBe(200);
  return evalRunSchema.parse(res.body);
}

async function waitFor(user: TestUser, id: string, check: (run: EvalRunDto) => boolean, ms = 90_000) {
  let last: EvalRunDto | undefined;
  const ok = await until(async () => check((last = await getRun(user, id))), ms);
  if (!ok) throw new Error(`the run never got there: ${JSON.stringify(last)}`);
  return last!;
}

const finished = (run: EvalRunDto) => !['QUEUED', 'RUNNING'].includes(run.status);

async function events(user: TestUser, id: string) {
  const res = await call(eventsRoute, 'GET', '/x', {
    key: user.key,
    params: { eval_run_id: id },
    query: { limit: 1000 },
  });
  return evalEventListSchema.parse(res.body).data;
}

async function results(user: TestUser, id: string, query: Record<string, string | number> = {}) {
  const res = await call(resultsRoute, 'GET', '/x', { key: user.key, params: { eval_run_id: id }, query });
  return res;
}

/** A model with checkpoints at steps 1 and 2 (no weights of their own: they serve the tiny base model). */
async function modelWithCheckpoints(user: TestUser) {
  const model = await createModel(user);
  await seedCheckpoints(model.id, [1, 2]);
  const name = `${model.entity}/${model.project}/${model.name}`;
  return { model, step1: `${name}:step1`, step2: `${name}:step2` };
}

describe('eval runs on the built-in tiny model', () => {
  it('runs to COMPLETED with results, summary, progress, events and eval metrics in the model history', async () => {
    const user = await createUser();
    const { model, step1, step2 } = await modelWithCheckpoints(user);
    const set = await createEvalSet(user, [evalLine('2+2?', '4'), evalLine('Say hi', 'hi'), evalLine('Count', '3')]);
    const created = await startRun(user, {
      eval_set_id: set.id,
      targets: [step1, model.id],
      scorers: [
        { type: 'exact_match' },
        { type: 'regex', name: 'anything', pattern: '[\\s\\S]*' },
        { type: 'judge', model: TEST_BASE_MODEL, rubric: 'Is the answer correct?', sampling: { max_tokens: 4 } },
      ],
      sampling: { max_tokens: 6, temperature: 0 },
      name: 'first',
    });
    expect(created.status).toBe(201);
    const run = evalRunSchema.parse(created.body);
    expect(run).toMatchObject({
      status: 'QUEUED',
      name: 'first',
      eval_set: { name: set.name, version: 1, project: 'evals' },
      // The model id resolves to its latest checkpoint, stored under its canonical name.
      targets: [
        { name: step1, model_id: model.id, step: 1 },
        { name: step2, model_id: model.id, step: 2 },
      ],
      scorers: [
        { type: 'exact_match', name: 'exact_match' },
        { type: 'regex', name: 'anything' },
        { type: 'judge', name: 'judge', model: TEST_BASE_MODEL },
      ],
      sampling: { max_tokens: 6, temperature: 0, top_p: 1, seed: 0 },
      n: 1,
      progress: { done: 0, total: 6 },
    });

    const done = await waitFor(user, run.id, finished);
    expect(done.status).toBe('COMPLETED');
    expect(done.error).toBeNull();
    expect(done.progress).toEqual({ done: 6, total: 6 });
    expect(done.started_at).not.toBeNull();
    expect(done.finished_at).not.toBeNull();
    expect(done.summary).toHaveLength(6);
    for (const row of done.summary) {
      expect(row.total).toBe(3);
      expect(row.mean).toBeGreaterThanOrEqual(0);
      expect(row.mean).toBeLessThanOrEqual(1);
    }
    expect(done.summary.find((r) => r.target === step1 && r.scorer === 'anything')).toMatchObject({
      mean: 1,
      passed: 3,
    });

    const page = evalResultListSchema.parse((await results(user, run.id)).body);
    expect(page.data.map((r) => r.index)).toEqual([0, 1, 2]);
    expect(page.data[0]).toMatchObject({ messages: [{ role: 'user', content: '2+2?' }], reference: '4' });
    for (const row of page.data) {
      expect(row.outputs.map((o) => `${o.target}#${o.sample}`)).toEqual([`${step1}#0`, `${step2}#0`]);
      for (const output of row.outputs) {
        expect(typeof output.text).toBe('string');
        expect(['stop', 'length']).toContain(output.finish_reason);
        const exact = output.scores.exact_match;
        expect(exact.passed).toBe(output.text!.trim().toLowerCase() === String(row.reference).toLowerCase());
        // The random model's verdict means nothing; what is checked is that it is asked and recorded faithfully.
        const judge = output.scores.judge;
        expect(judge.judge_prompt).toEqual([
          expect.objectContaining({ role: 'system' }),
          expect.objectContaining({
            role: 'user',
            content: expect.stringContaining(`Answer to grade:\n${output.text}`),
          }),
        ]);
        expect(typeof judge.verdict).toBe('string');
        if (judge.error?.startsWith('the judge did not answer')) expect(judge.score).toBe(0);
        else expect(judge.score).toBe(parseJudgeVerdict(judge.verdict!).score);
      }
    }

    const log = await events(user, run.id);
    expect(log[0]).toMatchObject({ type: 'eval_started', data: { total: 6 } });
    expect(log.at(-1)).toMatchObject({ type: 'eval_completed', data: { done: 6, total: 6 } });
    for (const e of log.filter((e) => e.type === 'eval_progress')) expect(e.data).toMatchObject({ total: 6 });
    expect(log.filter((e) => e.type === 'eval_completed')).toHaveLength(1);

    // eval/<set>/<scorer> at each checkpoint's step, in the history the model page and /compare read.
    const history = await call(historyRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } });
    const series = historySchema.parse(history.body).series;
    const exactSeries = series.find((s) => s.name === `eval/${set.name}/exact_match`);
    const mean = (target: string) => done.summary.find((r) => r.target === target && r.scorer === 'exact_match')!.mean;
    expect(exactSeries?.points).toEqual([
      [1, mean(step1)],
      [2, mean(step2)],
    ]);
    expect(series.find((s) => s.name === `eval/${set.name}/anything`)?.points).toEqual([
      [1, 1],
      [2, 1],
    ]);
    // Listed, newest first, by set and by model.
    const bySet = await call(evalRunsRoute, 'GET', '/v1/preview/eval-runs', {
      key: user.key,
      query: { eval_set_id: set.id },
    });
    expect(evalRunListSchema.parse(bySet.body).data.map((r) => r.id)).toEqual([run.id]);
    const byModel = await call(evalRunsRoute, 'GET', '/v1/preview/eval-runs', {
      key: user.key,
      query: { model_id: model.id },
    });
    expect(evalRunListSchema.parse(byModel.body).data.map((r) => r.id)).toEqual([run.id]);
    // n samples per example: a second run's `total` counts them.
    const twice = await startRun(user, {
      eval_set_id: set.id,
      targets: [step1],
      scorers: [{ type: 'contains' }],
      n: 2,
      sampling: { max_tokens: 2 },
    });
    expect(twice.body.progress).toEqual({ done: 0, total: 6 });
    const second = await waitFor(user, twice.body.id, finished);
    expect(second).toMatchObject({ status: 'COMPLETED', progress: { done: 6, total: 6 } });
    const samples = evalResultListSchema.parse((await results(user, second.id)).body).data[0].outputs;
    expect(samples.map((o) => o.sample)).toEqual([0, 1]);
  });

  it('cancels promptly, keeps finished samples, and is idempotent; 409 once completed', async () => {
    const user = await createUser();
    const { step1, step2 } = await modelWithCheckpoints(user);
    // Large enough that the run is still going when the cancel arrives (the tiny model answers in milliseconds).
    const lines = Array.from({ length: 200 }, (_, i) => evalLine(`Question ${i}`, String(i)));
    const set = await createEvalSet(user, lines);
    const created = await startRun(user, {
      eval_set_id: set.id,
      targets: [step1, step2],
      scorers: [{ type: 'contains' }],
      sampling: { max_tokens: 64 },
    });
    const id = created.body.id as string;
    const stored = async () =>
      (await (await getDb()).select().from(evalResults).where(eq(evalResults.runId, id))).length;
    expect(await until(async () => (await stored()) >= 2, 60_000)).toBe(true);
    const cancelled = await call(cancelRoute, 'POST', '/x', { key: user.key, params: { eval_run_id: id } });
    expect(cancelled.status).toBe(200);
    expect(evalRunSchema.parse(cancelled.body)).toMatchObject({ status: 'CANCELLED' });
    // Stops: nothing more is stored a moment later (samples in flight are dropped, not finished).
    const atCancel = await stored();
    expect(atCancel).toBeGreaterThanOrEqual(2);
    expect(atCancel).toBeLessThan(400);
    const again = await call(cancelRoute, 'POST', '/x', { key: user.key, params: { eval_run_id: id } });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('CANCELLED');
    await until(async () => (await events(user, id)).some((e) => e.type === 'eval_cancelled'), 5_000);
    // The runner has let go once the next run is picked up; by then the count has not moved.
    const probe = await startRun(user, {
      eval_set_id: (await createEvalSet(user, [evalLine('x', 'y')])).id,
      targets: [step1],
      scorers: [{ type: 'contains' }],
      sampling: { max_tokens: 1 },
    });
    await waitFor(user, probe.body.id, finished);
    // At most the samples whose write was already under way (one per worker, 4) land after the cancel.
    const final = await stored();
    expect(final - atCancel).toBeLessThanOrEqual(4);
    expect(final).toBeLessThan(400);
    const run = await getRun(user, id);
    expect(run.status).toBe('CANCELLED');
    // The summary keeps what finished: every sample stored by the cancel (one score each, one scorer), whichever
    // target it was for (with 4 in flight, the first to land may all be step 2's).
    const summarized = run.summary.reduce((n, r) => n + r.total, 0);
    expect(summarized).toBeGreaterThanOrEqual(atCancel);
    expect(summarized).toBeLessThanOrEqual(final);
    const log = await events(user, id);
    expect(log.filter((e) => e.type === 'eval_cancelled')).toHaveLength(1);
    expect(log.some((e) => e.type === 'eval_completed')).toBe(false);

    const completed = await call(cancelRoute, 'POST', '/x', { key: user.key, params: { eval_run_id: probe.body.id } });
    expect(completed.status).toBe(409);
  });

  it('resumes a run left RUNNING by a server that stopped, at once, skipping the samples already stored', async () => {
    const user = await createUser();
    const { step1 } = await modelWithCheckpoints(user);
    const set = await createEvalSet(
      user,
      Array.from({ length: 60 }, (_, i) => evalLine(`Q${i}`, String(i))),
    );
    const created = await startRun(user, {
      eval_set_id: set.id,
      targets: [step1],
      scorers: [{ type: 'contains' }],
      sampling: { max_tokens: 32 },
    });
    const id = created.body.id as string;
    const db = await getDb();
    const stored = () => db.select().from(evalResults).where(eq(evalResults.runId, id));
    expect(await until(async () => (await stored()).length >= 3, 60_000)).toBe(true);
    // The server stops (SIGTERM): its runner stops where it is, the run stays RUNNING, and its lease is released.
    await stopEvalRunner();
    let before: Awaited<ReturnType<typeof stored>>;
    try {
      const [left] = await db.select().from(evalRuns).where(eq(evalRuns.id, id));
      expect(left.status).toBe('RUNNING');
      expect([left.leaseOwner, left.leaseExpiresAt]).toEqual([null, null]);
      before = await stored();
      expect(before.length).toBeGreaterThanOrEqual(3);
      expect(before.length).toBeLessThan(60);
    } finally {
      // Another server (a new owner) takes the run over at once: as one of several on PostgreSQL, which claims only
      // runs whose lease is free or has run out (the stopped server's would have had a minute left).
      startEvalRunner({ embeddedDatabase: false });
    }
    const done = await waitFor(user, id, finished);
    expect(done).toMatchObject({ status: 'COMPLETED', progress: { done: 60, total: 60 } });
    const after = await stored();
    expect(after).toHaveLength(60);
    // The samples stored before the restart were kept as they were, not generated again.
    for (const row of before) {
      const same = after.find((r) => r.exampleIdx === row.exampleIdx && r.sample === row.sample)!;
      expect(same.createdAt.getTime()).toBe(row.createdAt.getTime());
    }
    const log = await events(user, id);
    expect(log.filter((e) => e.type === 'eval_started')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'eval_completed')).toHaveLength(1);
  });
});

describe('client scores and the regression filters', () => {
  it('posts client scores into the summary and filters regressed / improved / changed between two targets', async () => {
    const user = await createUser();
    const { model, step1, step2 } = await modelWithCheckpoints(user);
    const set = await createEvalSet(
      user,
      Array.from({ length: 4 }, (_, i) => evalLine(`Q${i}`, String(i))),
    );
    const created = await startRun(user, {
      eval_set_id: set.id,
      targets: [step1, step2],
      scorers: [{ type: 'regex', name: 'any', pattern: '[\\s\\S]*' }],
      sampling: { max_tokens: 2 },
    });
    const id = created.body.id as string;
    await waitFor(user, id, finished);
    // Example 0 passes at both, 1 regresses (passes at step 1, fails at step 2), 2 improves, 3 fails at both.
    const grid: [number, number][] = [
      [1, 0.9],
      [0.8, 0.1],
      [0.2, 0.7],
      [0, 0],
    ];
    const posted = await call(scoresRoute, 'POST', '/x', {
      key: user.key,
      params: { eval_run_id: id },
      body: {
        scorer: 'human',
        scores: grid.flatMap(([a, b], index) => [
          { index, target: step1, score: a, comment: `ex ${index}` },
          { index, target: step2, sample: 0, score: b },
        ]),
      },
    });
    expect(posted.status).toBe(200);
    const run = evalRunSchema.parse(posted.body);
    expect(run.scorers.at(-1)).toEqual({ type: 'client', name: 'human' });
    expect(run.summary.find((r) => r.target === step1 && r.scorer === 'human')).toEqual({
      target: step1,
      scorer: 'human',
      mean: 0.5,
      passed: 2,
      total: 4,
    });
    // The completed run's client scorer charts too.
    const history = historySchema.parse(
      (await call(historyRoute, 'GET', '/x', { key: user.key, params: { model_id: model.id } })).body,
    );
    // Means of floats: the database sums them in whatever order it reads the rows (0.425 came back as
    // 0.42499999999999993 on PostgreSQL once), so compared to 12 places.
    const human = history.series.find((s) => s.name === `eval/${set.name}/human`)?.points ?? [];
    expect(human.map(([x]) => x)).toEqual([1, 2]);
    expect(human[0][1]).toBeCloseTo(0.5, 12);
    expect(human[1][1]).toBeCloseTo(0.425, 12);

    // The filters read the mean over every scorer: `any` passes everywhere (1), so the mean is (1 + human) / 2.
    // That keeps example 1 at step 2 at 0.55 (passed): score the other way to make the grid decisive.
    await call(scoresRoute, 'POST', '/x', {
      key: user.key,
      params: { eval_run_id: id },
      body: {
        scorer: 'any2',
        scores: grid.flatMap(([a, b], index) => [
          { index, target: step1, score: a },
          { index, target: step2, score: b },
        ]),
      },
    });
    const filtered = async (filter: string, a = step1, b = step2) => {
      const res = await results(user, id, { filter, a, b });
      expect(res.status).toBe(200);
      return evalResultListSchema.parse(res.body).data.map((r) => r.index);
    };
    // Means at step1: (1+1+1)/3, (1+.8+.8)/3, (1+.2+.2)/3 = .47, (1+0+0)/3 = .33; at step2: .93, .4, .8, .33.
    expect(await filtered('regressed')).toEqual([1]);
    expect(await filtered('improved')).toEqual([2]);
    expect(await filtered('changed')).toEqual([1, 2]);
    expect(await filtered('regressed', step2, step1)).toEqual([2]);
    const row = evalResultListSchema.parse((await results(user, id, { filter: 'regressed', a: step1, b: step2 })).body)
      .data[0];
    expect(row.outputs.find((o) => o.target === step1)?.scores.human).toEqual({
      score: 0.8,
      passed: true,
      comment: 'ex 1',
    });

    const notInRun = await results(user, id, { filter: 'regressed', a: step1, b: 'tuneboard/tiny-random' });
    expect(notInRun.status).toBe(422);
    expect(notInRun.body.detail[0]).toMatchObject({ loc: ['query', 'b'] });
    expect(notInRun.body.detail[0].msg).toContain('is not a target of this run');
    const missing = await results(user, id, { filter: 'improved', a: step1 });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0].loc).toEqual(['query', 'b']);
  });

  it('refuses client scores outside [0, 1], unknown indexes, targets and samples, and a built-in scorer’s name', async () => {
    const user = await createUser();
    const { step1 } = await modelWithCheckpoints(user);
    const set = await createEvalSet(user, [evalLine('a', 'b'), evalLine('c', 'd')]);
    const created = await startRun(user, {
      eval_set_id: set.id,
      targets: [step1],
      scorers: [{ type: 'contains' }],
      sampling: { max_tokens: 1 },
    });
    const id = created.body.id as string;
    const post = (body: unknown) =>
      call(scoresRoute, 'POST', '/x', { key: user.key, params: { eval_run_id: id }, body });
    const bad = await post({
      scorer: 'mine',
      scores: [
        { index: 0, target: step1, score: 1.5 },
        { index: 2, target: step1, score: 1 },
        { index: 0, target: 'other/model', score: 1 },
        { index: 0, target: step1, sample: 1, score: 1 },
      ],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'scores', 0, 'score'],
      ['body', 'scores', 1, 'index'],
      ['body', 'scores', 2, 'target'],
      ['body', 'scores', 3, 'sample'],
    ]);
    const clash = await post({ scorer: 'contains', scores: [{ index: 0, target: step1, score: 1 }] });
    expect(clash.status).toBe(422);
    expect(clash.body.detail[0].msg).toContain('is a contains scorer of this run');
    await waitFor(user, id, finished);
  });
});

describe('run creation checks', () => {
  it('answers 422 naming the unknown scorer, bad regex, bad schema, unknown judge model or unknown target', async () => {
    const user = await createUser();
    const { step1 } = await modelWithCheckpoints(user);
    const set = await createEvalSet(user, [evalLine('a', 'b')]);
    const base = { eval_set_id: set.id, targets: [step1], scorers: [{ type: 'exact_match' }] };
    const cases: [Record<string, unknown>, (string | number)[], RegExp][] = [
      [{ scorers: [{ type: 'bleu' }] }, ['body', 'scorers', 0, 'type'], /./],
      [
        { scorers: [{ type: 'exact_match' }, { type: 'regex', pattern: '([a-' }] },
        ['body', 'scorers', 1, 'pattern'],
        /scorer 1 \(regex\): the pattern does not compile/,
      ],
      [
        { scorers: [{ type: 'json_schema', schema: { type: 'integer', minimum: 'zero' } }] },
        ['body', 'scorers', 0, 'schema'],
        /the schema does not compile/,
      ],
      [
        { scorers: [{ type: 'judge', model: 'no/such/judge', rubric: 'r' }] },
        ['body', 'scorers', 0, 'model'],
        /scorer 0 \(judge\): the model 'no\/such\/judge' does not exist/,
      ],
      [
        { targets: [step1, `${step1.split(':')[0]}:step99`] },
        ['body', 'targets', 1],
        /target 1: the model '.*:step99' does not exist/,
      ],
      [{ targets: ['nonexistent-base-model'] }, ['body', 'targets', 0], /target 0/],
      [{ targets: [step1, step1] }, ['body', 'targets', 1], /listed twice/],
      [{ sampling: { temperature: 5 } }, ['body', 'sampling', 'temperature'], /temperature/],
      [{ n: 17 }, ['body', 'n'], /./],
      [{ targets: [] }, ['body', 'targets'], /./],
    ];
    for (const [patch, loc, msg] of cases) {
      const res = await startRun(user, { ...base, ...patch });
      expect(res.status, JSON.stringify(patch)).toBe(422);
      expect(res.body.detail[0].loc, JSON.stringify(res.body)).toEqual(loc);
      expect(res.body.detail[0].msg).toMatch(msg);
    }
    const list = await call(evalRunsRoute, 'GET', '/v1/preview/eval-runs', { key: user.key });
    expect(list.body.data).toEqual([]);
  });

  it('answers 404 for another user’s runs and sets, and 409 when deleting a set a queued run uses', async () => {
    const owner = await createUser();
    const other = await createUser();
    const { step1 } = await modelWithCheckpoints(owner);
    const set = await createEvalSet(
      owner,
      Array.from({ length: 30 }, (_, i) => evalLine(`q${i}`, 'x')),
    );
    const created = await startRun(owner, {
      eval_set_id: set.id,
      targets: [step1],
      scorers: [{ type: 'contains' }],
      sampling: { max_tokens: 16 },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    for (const [mod, method] of [
      [evalRunRoute, 'GET'],
      [cancelRoute, 'POST'],
      [eventsRoute, 'GET'],
      [resultsRoute, 'GET'],
    ] as const) {
      const res = await call(mod, method, '/x', { key: other.key, params: { eval_run_id: id } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Eval run not found' });
    }
    const scores = await call(scoresRoute, 'POST', '/x', {
      key: other.key,
      params: { eval_run_id: id },
      body: { scorer: 'x', scores: [{ index: 0, target: step1, score: 1 }] },
    });
    expect(scores.status).toBe(404);
    // Someone else's set, and someone else's checkpoint as a target.
    const foreignSet = await startRun(other, {
      eval_set_id: set.id,
      targets: [TEST_BASE_MODEL],
      scorers: [{ type: 'contains' }],
    });
    expect(foreignSet.status).toBe(404);
    const mine = await createEvalSet(other, [evalLine('a', 'b')]);
    const foreignTarget = await startRun(other, {
      eval_set_id: mine.id,
      targets: [step1],
      scorers: [{ type: 'contains' }],
    });
    expect(foreignTarget.status).toBe(422);
    expect((await call(evalRunsRoute, 'GET', '/v1/preview/eval-runs', { key: other.key })).body.data).toEqual([]);

    const busy = await call(evalSetRoute, 'DELETE', '/x', { key: owner.key, params: { eval_set_id: set.id } });
    expect(busy.status).toBe(409);
    await call(cancelRoute, 'POST', '/x', { key: owner.key, params: { eval_run_id: id } });
    const gone = await call(evalSetRoute, 'DELETE', '/x', { key: owner.key, params: { eval_set_id: set.id } });
    expect(gone.status).toBe(204);
    const run = await call(evalRunRoute, 'GET', '/x', { key: owner.key, params: { eval_run_id: id } });
    expect(run.status).toBe(404);
  });
});
