import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as evalSetsRoute from '@/app/v1/preview/eval-sets/route';
import * as evalSetRoute from '@/app/v1/preview/eval-sets/[eval_set_id]/route';
import * as examplesRoute from '@/app/v1/preview/eval-sets/[eval_set_id]/examples/route';
import { evalExampleListSchema, evalSetListSchema, evalSetSchema } from '@/lib/schemas/evals';
import { call, createUser } from '../helpers';
import { createEvalSet, evalLine, postEvalSet } from '../support/evals';

describe('POST /v1/preview/eval-sets', () => {
  it('stores a raw JSONL body as version 1, then 2, and lists every version newest first', async () => {
    const user = await createUser();
    const text = [evalLine('2+2?', '4', { metadata: { topic: 'math' } }), '', evalLine('3+3?', 6)].join('\n') + '\n';
    const first = await postEvalSet(user, { project: 'p', name: 'arith' }, text);
    expect(first.status).toBe(201);
    const set = evalSetSchema.parse(first.body);
    expect(set).toMatchObject({
      object: 'eval_set',
      entity: user.handle,
      project: 'p',
      name: 'arith',
      version: 1,
      num_examples: 2,
    });
    expect(set.sha256).toBe(crypto.createHash('sha256').update(text).digest('hex'));
    const second = await postEvalSet(user, { project: 'p', name: 'arith' }, text);
    expect(second.body.version).toBe(2);
    await createEvalSet(user, [evalLine('x', 'y')], 'other', 'p');

    const all = await call(evalSetsRoute, 'GET', '/v1/preview/eval-sets', { key: user.key, query: { project: 'p' } });
    expect(evalSetListSchema.parse(all.body).data.map((s) => `${s.name}:${s.version}`)).toEqual([
      'other:1',
      'arith:2',
      'arith:1',
    ]);
    const versions = await call(evalSetsRoute, 'GET', '/v1/preview/eval-sets', {
      key: user.key,
      query: { name: 'arith', limit: 1 },
    });
    const page1 = evalSetListSchema.parse(versions.body);
    expect(page1.data.map((s) => s.version)).toEqual([2]);
    expect(page1.has_more).toBe(true);
    const page2 = await call(evalSetsRoute, 'GET', '/v1/preview/eval-sets', {
      key: user.key,
      query: { name: 'arith', limit: 1, after: page1.next_cursor },
    });
    expect(evalSetListSchema.parse(page2.body)).toMatchObject({ has_more: false, data: [{ version: 1 }] });

    const got = await call(evalSetRoute, 'GET', '/x', { key: user.key, params: { eval_set_id: set.id } });
    expect(evalSetSchema.parse(got.body)).toEqual(set);
  });

  it('pages examples in file order, with a trailing assistant message as the reference', async () => {
    const user = await createUser();
    const sft = JSON.stringify({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Capital of France?' },
        { role: 'assistant', content: 'Paris' },
      ],
    });
    const set = await createEvalSet(user, [sft, evalLine('q1', { a: 1 }), evalLine('q2'), evalLine('q3', ['x', 'y'])]);
    const first = await call(examplesRoute, 'GET', '/x', {
      key: user.key,
      params: { eval_set_id: set.id },
      query: { limit: 2 },
    });
    const page = evalExampleListSchema.parse(first.body);
    expect(page.data).toEqual([
      {
        index: 0,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Capital of France?' },
        ],
        reference: 'Paris',
        metadata: {},
      },
      { index: 1, messages: [{ role: 'user', content: 'q1' }], reference: { a: 1 }, metadata: {} },
    ]);
    expect(page).toMatchObject({ has_more: true, next_cursor: '1' });
    const rest = await call(examplesRoute, 'GET', '/x', {
      key: user.key,
      params: { eval_set_id: set.id },
      query: { after: page.next_cursor },
    });
    expect(evalExampleListSchema.parse(rest.body)).toMatchObject({
      has_more: false,
      data: [
        { index: 2, reference: null },
        { index: 3, reference: ['x', 'y'] },
      ],
    });
  });

  it('accepts multipart with one file part', async () => {
    const user = await createUser();
    const form = new FormData();
    form.append('file', new Blob([evalLine('a', 'b') + '\n']), 'set.jsonl');
    const res = await postEvalSet(user, { project: 'p', name: 'mp' }, form);
    expect(res.status).toBe(201);
    expect(res.body.num_examples).toBe(1);
  });

  it.each([
    ['not json', 'invalid JSON'],
    ['[1,2]', 'expected a JSON object'],
    ['{"messages": "hi"}', '"messages" must be an array'],
    ['{"messages": []}', '"messages" must not be empty'],
    ['{"messages": [{"role": "robot", "content": "x"}]}', 'message 1 has role "robot"'],
    ['{"messages": [{"role": "user", "content": 5}]}', 'message 1 content must be a string'],
    ['{"messages": [{"role": "user", "content": "x"}], "metadata": [1]}', '"metadata" must be an object'],
    [
      '{"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}], "reference": "y"}',
      'the prompt must end with a user or tool message, not assistant',
    ],
    ['{"messages": [{"role": "assistant", "content": "y"}]}', 'there is no prompt before the assistant message'],
    ['{"messages": [{"role": "system", "content": "y"}]}', 'not system'],
  ])('refuses a bad line %s with 422 naming the line', async (bad, reason) => {
    const user = await createUser();
    const res = await postEvalSet(user, { project: 'p', name: 'bad' }, [evalLine('ok', '1'), '', bad].join('\n'));
    expect(res.status).toBe(422);
    expect(res.body.detail[0].msg).toContain('line 3:');
    expect(res.body.detail[0].msg).toContain(reason);
    // Nothing was stored.
    const list = await call(evalSetsRoute, 'GET', '/v1/preview/eval-sets', { key: user.key });
    expect(list.body.data).toEqual([]);
  });

  it('lists every bad line, and refuses an empty file and a set of more than 10,000 examples', async () => {
    const user = await createUser();
    const res = await postEvalSet(user, { project: 'p', name: 'bad' }, ['x', evalLine('ok'), '{}'].join('\n'));
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { msg: string }) => d.msg.split(':')[0])).toEqual([
      'Value error, line 1',
      'Value error, line 3',
    ]);
    const empty = await postEvalSet(user, { project: 'p', name: 'empty' }, '\n\n');
    expect(empty.status).toBe(422);
    expect(empty.body.detail[0].msg).toContain('no examples');
    const many = Array.from({ length: 10_001 }, (_, i) => evalLine(`q${i}`, String(i))).join('\n');
    const tooMany = await postEvalSet(user, { project: 'p', name: 'many' }, many);
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0].msg).toContain('line 10001: more than 10000 examples');
  });

  it('answers 404 for another user’s set and for a malformed id', async () => {
    const owner = await createUser();
    const other = await createUser();
    const set = await createEvalSet(owner, [evalLine('a', 'b')]);
    for (const [mod, method] of [
      [evalSetRoute, 'GET'],
      [evalSetRoute, 'DELETE'],
      [examplesRoute, 'GET'],
    ] as const) {
      const res = await call(mod, method, '/x', { key: other.key, params: { eval_set_id: set.id } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Eval set not found' });
    }
    const malformed = await call(evalSetRoute, 'GET', '/x', { key: owner.key, params: { eval_set_id: 'nope' } });
    expect(malformed.status).toBe(404);
    const list = await call(evalSetsRoute, 'GET', '/v1/preview/eval-sets', { key: other.key });
    expect(list.body.data).toEqual([]);
  });

  it('deletes a set (204), after which it is gone', async () => {
    const user = await createUser();
    const set = await createEvalSet(user, [evalLine('a', 'b')]);
    const del = await call(evalSetRoute, 'DELETE', '/x', { key: user.key, params: { eval_set_id: set.id } });
    expect(del.status).toBe(204);
    const got = await call(evalSetRoute, 'GET', '/x', { key: user.key, params: { eval_set_id: set.id } });
    expect(got.status).toBe(404);
  });
});
