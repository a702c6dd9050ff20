import { describe, expect, it } from 'vitest';
import {
  buildRunBody,
  defaultPair,
  evalRunSchema,
  evalSetListSchema,
  exampleMarks,
  formatScore,
  groupSetVersions,
  timestampIso,
  placeRunErrors,
  messageText,
  newScorerDraft,
  playgroundLink,
  promptParts,
  referenceText,
  resultRowSchema,
  resultsQuery,
  runProgress,
  scoreChart,
  scorerBody,
  scorerDraftFrom,
  summaryGrid,
  targetLabel,
  type RunDraft,
} from './evals';

const run = evalRunSchema.parse({
  object: 'eval_run',
  id: 'r1',
  eval_set_id: 's1',
  eval_set: { name: 'math', version: 2, project: 'demo' },
  name: null,
  status: 'COMPLETED',
  error: null,
  targets: [
    { name: 'ada/demo/m:step7', model_id: 'm1', step: 7 },
    { name: 'ada/demo/m:step3', model_id: 'm1', step: 3 },
    { name: 'tuneboard/tiny-random', model_id: null, step: null },
  ],
  scorers: [{ type: 'exact_match', name: 'exact_match' }, { type: 'contains' }],
  sampling: { temperature: 0, max_tokens: 64 },
  n: 1,
  progress: { done: 6, total: 6 },
  summary: [
    { target: 'ada/demo/m:step3', scorer: 'exact_match', mean: 0.5, passed: 1, total: 2 },
    { target: 'ada/demo/m:step7', scorer: 'exact_match', mean: 1, passed: 2, total: 2 },
    { target: 'ada/demo/m:step3', scorer: 'contains', mean: 0.5, passed: 1, total: 2 },
    { target: 'ada/demo/m:step7', scorer: 'contains', mean: 0.5, passed: 1, total: 2 },
    { target: 'tuneboard/tiny-random', scorer: 'exact_match', mean: 0, passed: 0, total: 2 },
    { target: 'ada/demo/m:step7', scorer: 'mine', mean: 0.8, passed: 2, total: 2 },
  ],
  created_at: '2026-01-01T00:00:00Z',
  started_at: null,
  finished_at: null,
});

describe('scoreChart', () => {
  it('draws one line per scorer of a model over its steps in step order, and leaves stepless targets off', () => {
    const { chart, offChart } = scoreChart(run);
    expect(offChart).toEqual(['tuneboard/tiny-random']);
    expect(chart?.series.map((s) => s.name)).toEqual(['exact_match', 'contains', 'mine']);
    expect(chart?.series[0].points).toEqual([
      { step: 3, value: 0.5 },
      { step: 7, value: 1 },
    ]);
    // A client scorer posted for one step only is a single point, not dropped.
    expect(chart?.series[2].points).toEqual([{ step: 7, value: 0.8 }]);
  });

  it('names each line by model and scorer when several models are compared', () => {
    const two = {
      ...run,
      targets: [
        { name: 'ada/demo/a:step1', step: 1 },
        { name: 'ada/demo/b:step1', step: 1 },
      ],
      scorers: [{ type: 'exact_match' }],
      summary: [
        { target: 'ada/demo/a:step1', scorer: 'exact_match', mean: 1, passed: 1, total: 1 },
        { target: 'ada/demo/b:step1', scorer: 'exact_match', mean: 0, passed: 0, total: 1 },
      ],
    };
    expect(scoreChart(two).chart?.series.map((s) => s.name)).toEqual(['a · exact_match', 'b · exact_match']);
  });

  it('has no chart when nothing is scored yet', () => {
    expect(scoreChart({ ...run, summary: [] }).chart).toBeNull();
  });
});

describe('summaryGrid', () => {
  it('puts every target in run order with a cell per scorer, client scorers last', () => {
    const grid = summaryGrid(run);
    expect(grid.scorers).toEqual(['exact_match', 'contains', 'mine']);
    expect(grid.rows.map((r) => r.target)).toEqual(['ada/demo/m:step7', 'ada/demo/m:step3', 'tuneboard/tiny-random']);
    expect(grid.rows[2].cells.map((c) => c?.mean)).toEqual([0, undefined, undefined]);
  });
});

describe('runProgress', () => {
  it('is unknown before the total is, whole when completed', () => {
    expect(runProgress({ status: 'QUEUED', progress: { done: 0, total: 0 } })).toBeNull();
    expect(runProgress({ status: 'RUNNING', progress: { done: 3, total: 12 } })).toBe(0.25);
    expect(runProgress({ status: 'COMPLETED', progress: null })).toBe(1);
  });
});

describe('targetLabel', () => {
  it('shortens a checkpoint to name and step, keeps a base model id whole', () => {
    expect(targetLabel('ada/demo/m:step3')).toBe('m · step 3');
    expect(targetLabel('ada/demo/m')).toBe('m');
    expect(targetLabel('tuneboard/tiny-random')).toBe('tuneboard/tiny-random');
  });
});

describe('prompt and playground link', () => {
  const messages = [
    { role: 'system', content: 'Be terse.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello' },
    { role: 'user', content: [{ type: 'text', text: 'What is 2+2?' }] },
  ];

  it('takes the system message and the last user message, counting the turns it leaves out', () => {
    expect(promptParts(messages)).toEqual({ system: 'Be terse.', prompt: 'What is 2+2?', earlierTurns: 2 });
  });

  it('links both targets with the prompt and the system message', () => {
    const href = playgroundLink(['ada/demo/m:step3', 'ada/demo/m:step7'], messages);
    const url = new URL(href, 'http://x');
    expect(url.pathname).toBe('/playground');
    expect(url.searchParams.getAll('model')).toEqual(['ada/demo/m:step3', 'ada/demo/m:step7']);
    expect(url.searchParams.get('prompt')).toBe('What is 2+2?');
    expect(url.searchParams.get('system')).toBe('Be terse.');
  });

  it('leaves system out when there is none', () => {
    const url = new URL(playgroundLink(['a'], [{ role: 'user', content: 'x & y' }]), 'http://x');
    expect(url.searchParams.has('system')).toBe(false);
    expect(url.searchParams.get('prompt')).toBe('x & y');
  });

  it('reads text of any content shape, and references as text', () => {
    expect(messageText(null)).toBe('');
    expect(messageText({ a: 1 })).toBe('{"a":1}');
    expect(referenceText(undefined)).toBeNull();
    expect(referenceText(4)).toBe('4');
    expect(referenceText({ ok: true })).toBe('{"ok":true}');
  });
});

describe('exampleMarks', () => {
  const row = resultRowSchema.parse({
    index: 0,
    messages: [{ role: 'user', content: 'q' }],
    reference: '4',
    outputs: [
      { target: 'A', sample: 1, text: 'four', scores: { exact_match: { score: 0, passed: false } } },
      { target: 'A', sample: 0, text: '4', scores: { exact_match: { score: 1, passed: true } } },
      { target: 'B', sample: 0, text: '4', scores: { exact_match: { score: 0.6 } } },
    ],
  });

  it('counts passes per scorer and target, in sample order, a score ≥ 0.5 passing without a flag', () => {
    const [a, b, c] = exampleMarks(row, ['A', 'B', 'C'], ['exact_match', 'judge']);
    expect(a.outputs.map((o) => o.sample)).toEqual([0, 1]);
    expect(a.marks).toEqual([
      { scorer: 'exact_match', passed: 1, scored: 2 },
      { scorer: 'judge', passed: 0, scored: 0 },
    ]);
    expect(a.mean).toBe(0.5);
    expect(b.marks[0]).toEqual({ scorer: 'exact_match', passed: 1, scored: 1 });
    expect(c.outputs).toEqual([]);
    expect(c.mean).toBeNull();
  });
});

describe('resultsQuery and defaultPair', () => {
  it('sends a filter only with two distinct targets', () => {
    expect(resultsQuery({ limit: 20, filter: 'regressed', a: 'x', b: 'x' })).toBe('limit=20');
    expect(resultsQuery({ limit: 20, after: '5', filter: 'regressed', a: 'x:step1', b: 'x:step2' })).toBe(
      'limit=20&after=5&filter=regressed&a=x%3Astep1&b=x%3Astep2',
    );
    expect(resultsQuery({ limit: 20, filter: 'all', a: 'x', b: 'y' })).toBe('limit=20');
  });

  it('pairs the lowest and highest step of one model', () => {
    expect(defaultPair(run.targets)).toEqual(['ada/demo/m:step3', 'ada/demo/m:step7']);
    expect(defaultPair([run.targets[2]])).toBeNull();
  });
});

describe('run form', () => {
  const draft = (over: Partial<RunDraft> = {}): RunDraft => ({
    evalSetId: 's1',
    targets: ['ada/demo/m:step3'],
    scorers: [newScorerDraft('exact_match')],
    temperature: '0',
    maxTokens: '256',
    n: '1',
    name: '',
    ...over,
  });

  it('builds the body the contract names', () => {
    expect(buildRunBody(draft({ name: ' nightly ' })).body).toEqual({
      eval_set_id: 's1',
      targets: ['ada/demo/m:step3'],
      scorers: [{ type: 'exact_match', normalize: true }],
      sampling: { temperature: 0, max_tokens: 256 },
      n: 1,
      name: 'nightly',
    });
  });

  it('keys errors like the API does, so its 422 and the browser check land on the same fields', () => {
    const regex = { ...newScorerDraft('regex'), pattern: '(' };
    const { body, errors } = buildRunBody(
      draft({ targets: [], scorers: [regex, newScorerDraft('judge')], temperature: '3', maxTokens: '1.5', n: '17' }),
    );
    expect(body).toBeUndefined();
    expect(Object.keys(errors).sort()).toEqual([
      'n',
      'sampling.max_tokens',
      'sampling.temperature',
      'scorers.0.pattern',
      'scorers.1.model',
      'scorers.1.rubric',
      'targets',
    ]);
    expect(errors['scorers.0.pattern']).toMatch(/^Does not compile/);
  });

  it('refuses two scorers of one name and more than eight targets', () => {
    const { errors } = buildRunBody(
      draft({
        targets: Array.from({ length: 9 }, (_, i) => `m:step${i}`),
        scorers: [newScorerDraft('contains'), newScorerDraft('contains')],
      }),
    );
    expect(errors['scorers.1.name']).toMatch(/Another scorer is named "contains"/);
    expect(errors.targets).toBe('At most 8 targets');
  });

  it('checks each scorer type: regex with {reference}, numeric tolerances, a JSON schema object', () => {
    expect(scorerBody({ ...newScorerDraft('regex'), pattern: '^{reference}$', flags: 'i' }).body).toEqual({
      type: 'regex',
      pattern: '^{reference}$',
      flags: 'i',
    });
    expect(scorerBody({ ...newScorerDraft('numeric'), tolerance: '0.01' }).body).toEqual({
      type: 'numeric',
      tolerance: 0.01,
    });
    expect(scorerBody({ ...newScorerDraft('numeric'), relative: '-1' }).errors.relative).toBeDefined();
    expect(scorerBody({ ...newScorerDraft('json_schema'), schema: '[1]' }).errors.schema).toBe(
      'The schema must be a JSON object',
    );
    expect(scorerBody({ ...newScorerDraft('json_schema'), schema: '{"type":"object"}' }).body).toEqual({
      type: 'json_schema',
      schema: { type: 'object' },
    });
    expect(scorerBody({ ...newScorerDraft('contains'), name: 'Bad Name' }).errors.name).toBeDefined();
  });
});

describe('list schemas', () => {
  it('reads the next cursor as next_cursor or last_id', () => {
    const set = { id: 's', project: 'p', name: 'n', version: 1, num_examples: 3 };
    expect(evalSetListSchema.parse({ object: 'list', data: [set], has_more: true, next_cursor: 'c' }).next).toBe('c');
    expect(evalSetListSchema.parse({ object: 'list', data: [set], has_more: true, last_id: 's' }).next).toBe('s');
    expect(evalSetListSchema.parse({ object: 'list', data: [set], has_more: false, last_id: 's' }).next).toBeNull();
  });
});

describe('placeRunErrors', () => {
  it("moves the API's 422 keys onto the form's fields, and what has no field into the form line", () => {
    expect(
      placeRunErrors({
        'targets.1': 'Unknown model ada/demo/x',
        'scorers.0.pattern': 'Does not compile',
        'scorers.2': 'Unknown scorer type',
        'scorers.1.sampling.top_p': 'Too high',
        'sampling.top_p': 'Too high',
        n: 'At most 16',
        '': 'Something else',
      }),
    ).toEqual({
      fields: {
        targets: 'Target 2: Unknown model ada/demo/x',
        'scorers.0.pattern': 'Does not compile',
        'scorers.2.type': 'scorers.2: Unknown scorer type',
        'scorers.1.type': 'scorers.1.sampling.top_p: Too high',
        n: 'At most 16',
      },
      form: ['sampling.top_p: Too high', 'Something else'],
    });
  });
});

describe('formatScore', () => {
  it('reads a mean as a pass rate', () => {
    expect(formatScore(0.75)).toBe('75%');
    expect(formatScore(5 / 6)).toBe('83.3%');
    expect(formatScore(1)).toBe('100%');
    expect(formatScore(null)).toBe('—');
  });
});

describe('groupSetVersions and timestampIso', () => {
  it('groups versions of one name, newest first, and keeps two projects apart', () => {
    const set = (project: string, name: string, version: number) => ({
      id: `${project}-${name}-${version}`,
      entity: 'ada',
      project,
      name,
      version,
      num_examples: 1,
    });
    const groups = groupSetVersions([set('p', 'a', 1), set('p', 'b', 1), set('p', 'a', 2), set('q', 'a', 1)]);
    expect(groups.map((g) => g.map((s) => s.id))).toEqual([['p-a-2', 'p-a-1'], ['p-b-1'], ['q-a-1']]);
  });

  it('reads epoch seconds and ISO strings', () => {
    expect(timestampIso(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(timestampIso('2026-01-01T00:00:00Z')).toBe('2026-01-01T00:00:00Z');
    expect(timestampIso(null)).toBeNull();
  });
});

describe('scorerDraftFrom', () => {
  it('turns a stored scorer back into a draft that builds the same body', () => {
    for (const stored of [
      { type: 'exact_match', name: 'exact_match', normalize: false },
      { type: 'contains', name: 'has-answer', case_sensitive: true },
      { type: 'regex', name: 'regex', pattern: '^{reference}$', flags: 'i' },
      { type: 'numeric', name: 'numeric', tolerance: 0.5 },
      { type: 'json_schema', name: 'json_schema', schema: { type: 'object' } },
      { type: 'judge', name: 'judge', model: 'tuneboard/tiny-random', rubric: 'PASS if right' },
    ]) {
      const draft = scorerDraftFrom(stored)!;
      const { name, ...rest } = stored;
      expect(scorerBody(draft).body).toEqual(name === stored.type ? rest : stored);
    }
    expect(scorerDraftFrom({ type: 'client', name: 'mine' })).toBeNull();
  });
});
