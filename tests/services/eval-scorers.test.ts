import { describe, expect, it } from 'vitest';
import { ApiError } from '@/lib/errors';
import type { ScorerInput } from '@/lib/schemas/evals';
import { answerJson, compileScorers, judgeMessages, lastNumber, parseJudgeVerdict } from '@/lib/services/eval-scorers';

function scorer(input: ScorerInput) {
  const [compiled] = compileScorers([input], ['body', 'scorers']);
  return (output: string, reference?: unknown) => compiled.score!(output, reference);
}

function compileError(input: unknown[]): ApiError {
  try {
    compileScorers(input as ScorerInput[], ['body', 'scorers']);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('compiled');
}

describe('exact_match', () => {
  it('normalizes by default (trim, whitespace, case) and compares exactly without', () => {
    const s = scorer({ type: 'exact_match' });
    expect(s('  The   Answer\n', 'the answer')).toEqual({ score: 1, passed: true });
    expect(s('the answer.', 'the answer')).toEqual({ score: 0, passed: false });
    const strict = scorer({ type: 'exact_match', normalize: false });
    expect(strict('The answer', 'the answer').passed).toBe(false);
    expect(strict('the answer', 'the answer').passed).toBe(true);
    // A non-string reference compares as its JSON.
    expect(s('4', 4).passed).toBe(true);
    expect(s('4', undefined)).toMatchObject({ passed: false, error: 'the example has no reference' });
  });
});

describe('contains', () => {
  it('is case-insensitive by default, and needs every item of an array reference', () => {
    const s = scorer({ type: 'contains' });
    expect(s('The capital is PARIS.', 'paris').passed).toBe(true);
    expect(s('The capital is Lyon.', 'paris').passed).toBe(false);
    expect(s('red, green and blue', ['red', 'blue']).passed).toBe(true);
    expect(s('red and green', ['red', 'blue']).passed).toBe(false);
    expect(scorer({ type: 'contains', case_sensitive: true })('PARIS', 'paris').passed).toBe(false);
  });
});

describe('regex', () => {
  it('matches the pattern, with {reference} as the escaped reference', () => {
    const s = scorer({ type: 'regex', pattern: '^answer: \\d+$', flags: 'im' });
    expect(s('ANSWER: 42').passed).toBe(true);
    expect(s('answer: forty-two').passed).toBe(false);
    const ref = scorer({ type: 'regex', pattern: '\\b{reference}\\b' });
    expect(ref('it costs 3.50 (USD)', '3.50').passed).toBe(true);
    // Escaped: the dot of the reference is not "any character".
    expect(ref('it costs 3x50', '3.50').passed).toBe(false);
    expect(ref('anything', undefined)).toMatchObject({ passed: false, error: 'the example has no reference' });
  });

  it('refuses a pattern that does not compile, and bad flags, with a 422 naming the scorer', () => {
    const err = compileError([{ type: 'exact_match' }, { type: 'regex', name: 'fmt', pattern: '(unclosed' }]);
    expect(err.status).toBe(422);
    expect(err.issues![0].loc).toEqual(['body', 'scorers', 1, 'pattern']);
    expect(err.issues![0].msg).toMatch(/scorer 1 \(fmt\): the pattern does not compile/);
    const flags = compileError([{ type: 'regex', pattern: 'a', flags: 'q' }]);
    expect(flags.issues![0].loc).toEqual(['body', 'scorers', 0, 'flags']);
  });
});

describe('json_schema', () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
    required: ['name'],
  };
  it('passes JSON that validates (also inside a ``` fence) and fails otherwise', () => {
    const s = scorer({ type: 'json_schema', schema });
    expect(s('{"name": "Ada", "age": 36}').passed).toBe(true);
    expect(s('Here:\n```json\n{"name": "Ada"}\n```').passed).toBe(true);
    expect(s('{"age": 36}')).toMatchObject({
      passed: false,
      error: expect.stringContaining("must have required property 'name'"),
    });
    expect(s('{"name": "Ada", "age": -1}').passed).toBe(false);
    expect(s('not json')).toMatchObject({ passed: false, error: 'the answer is not JSON' });
  });

  it('refuses a schema that does not compile', () => {
    const err = compileError([{ type: 'json_schema', schema: { type: 'no-such-type' } }]);
    expect(err.issues![0].loc).toEqual(['body', 'scorers', 0, 'schema']);
    expect(err.issues![0].msg).toMatch(/the schema does not compile/);
  });
});

describe('numeric', () => {
  it('compares the last number of the answer with the reference within the tolerance', () => {
    const exact = scorer({ type: 'numeric' });
    expect(exact('2 + 2 = 4', 4).passed).toBe(true);
    expect(exact('The total is 1,234.', '1234').passed).toBe(true);
    expect(exact('4 or maybe 5', 4).passed).toBe(false);
    expect(exact('no idea', 4)).toMatchObject({ passed: false, error: 'the answer holds no number' });
    expect(exact('4', 'four')).toMatchObject({ passed: false, error: 'the reference is not a number' });
    const abs = scorer({ type: 'numeric', tolerance: 0.1 });
    expect(abs('3.14159', 3.1).passed).toBe(true);
    expect(abs('3.3', 3.1).passed).toBe(false);
    const rel = scorer({ type: 'numeric', relative: 0.01 });
    expect(rel('about 1005', 1000).passed).toBe(true);
    expect(rel('about 1020', 1000).passed).toBe(false);
    expect(lastNumber('-2.5e3 then -7')).toBe(-7);
    expect(lastNumber('x = -2.5e3')).toBe(-2500);
  });
});

describe('scorer names', () => {
  it('default to the type and must be unique within a run', () => {
    const compiled = compileScorers(
      [{ type: 'exact_match' }, { type: 'contains', name: 'has_answer' }],
      ['body', 'scorers'],
    );
    expect(compiled.map((s) => s.stored)).toEqual([
      { type: 'exact_match', name: 'exact_match' },
      { type: 'contains', name: 'has_answer' },
    ]);
    const err = compileError([{ type: 'contains' }, { type: 'contains' }]);
    expect(err.issues![0]).toMatchObject({ loc: ['body', 'scorers', 1, 'name'] });
    expect(err.issues![0].msg).toMatch(/used twice/);
  });
});

describe('judge', () => {
  it('reads PASS, FAIL or a 0-10 score on the first line and keeps the raw verdict', () => {
    expect(parseJudgeVerdict('PASS\nThe answer is right.')).toEqual({
      score: 1,
      passed: true,
      verdict: 'PASS\nThe answer is right.',
    });
    expect(parseJudgeVerdict('\n**FAIL**: wrong city')).toMatchObject({ score: 0, passed: false });
    expect(parseJudgeVerdict('7/10 mostly right')).toMatchObject({ score: 0.7, passed: true });
    expect(parseJudgeVerdict('Score: 3')).toMatchObject({ score: 0.3, passed: false });
    expect(parseJudgeVerdict('The answer looks fine. PASS')).toMatchObject({
      score: 0,
      passed: false,
      error: expect.stringContaining('does not start with PASS'),
    });
    expect(parseJudgeVerdict('42')).toMatchObject({ score: 0, error: expect.any(String) });
  });

  it('asks with the rubric, the prompt, the reference and the answer', () => {
    const [system, user] = judgeMessages(
      'Is it the capital?',
      [{ role: 'user', content: 'Capital of France?' }],
      'Paris',
      'Lyon',
    );
    expect(system.content).toMatch(/first line write only PASS or FAIL/);
    expect(user.content).toContain('Rubric:\nIs it the capital?');
    expect(user.content).toContain('user: Capital of France?');
    expect(user.content).toContain('Reference answer:\nParis');
    expect(user.content).toContain('Answer to grade:\nLyon');
    const [compiled] = compileScorers([{ type: 'judge', model: 'm', rubric: 'r' }], ['s']);
    expect(compiled.judge).toEqual({ model: 'm', rubric: 'r', sampling: { temperature: 0, max_tokens: 128 } });
    expect(answerJson('{"a":1}')).toEqual({ value: { a: 1 } });
  });
});
