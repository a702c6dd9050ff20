import { describe, expect, it } from 'vitest';
import * as modelsRoute from '@/app/v1/preview/models/route';
import * as trainingJobsRoute from '@/app/v1/preview/training-jobs/route';
import * as sftRoute from '@/app/v1/preview/sft-training-jobs/route';
import * as logRoute from '@/app/v1/preview/models/[model_id]/log/route';
import * as chatRoute from '@/app/v1/chat/completions/route';
import { call, createModel, createUser } from '../support/helpers';

/** `[[[…]]]` or `{"a":{"a":…}}` nested `depth` deep, built as text so the test itself never recurses. */
function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('deeply nested JSON bodies', () => {
  for (const depth of [10_000, 100_000]) {
    for (const kind of ['array', 'object'] as const) {
      it(`answers 422, never 500, for a ${kind} nested ${depth} deep`, async () => {
        const user = await createUser();
        const model = await createModel(user);
        const deep = nested(depth, kind);
        const bodies: [Parameters<typeof call>[0], string, Record<string, string>][] = [
          [modelsRoute, `{"project":"p","name":"m","base_model":"x","extra":${deep}}`, {}],
          [modelsRoute, `{"project":"p","name":"m","base_model":${deep}}`, {}],
          [trainingJobsRoute, `{"model_id":"${model.id}","trajectory_groups":[],"experimental_config":${deep}}`, {}],
          [
            trainingJobsRoute,
            `{"model_id":"${model.id}","trajectory_groups":[{"trajectories":[{"messages_and_choices":[],"reward":1,"metadata":${deep}}]}]}`,
            {},
          ],
          [sftRoute, `{"model_id":"${model.id}","training_data_url":"x","config":${deep}}`, {}],
          [
            logRoute,
            `{"split":"val","trajectory_groups":[{"trajectories":[{"messages_and_choices":${deep},"reward":1}]}]}`,
            { model_id: model.id },
          ],
        ];
        for (const [mod, rawBody, params] of bodies) {
          const res = await call(mod, 'POST', '/x', {
            key: user.key,
            rawBody,
            params,
            headers: { 'content-type': 'application/json' },
          });
          expect(res.status, rawBody.slice(0, 80)).toBe(422);
          expect(JSON.stringify(res.body)).toMatch(/nest/i);
        }
        const chat = await call(chatRoute, 'POST', '/v1/chat/completions', {
          key: user.key,
          rawBody: `{"model":"tuneboard/tiny-random","messages":[{"role":"user","content":"hi"}],"metadata":${deep}}`,
          headers: { 'content-type': 'application/json' },
        });
        expect(chat.status).toBe(400);
      });
    }
  }

  it('still accepts ordinary nesting (a trajectory with tool calls and metadata objects)', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const res = await call(logRoute, 'POST', '/x', {
      key: user.key,
      params: { model_id: model.id },
      body: {
        split: 'val',
        trajectory_groups: [
          {
            trajectories: [
              {
                messages_and_choices: [{ role: 'user', content: 'hi' }],
                reward: 1,
                metadata: { a: { b: { c: [1, [2, [3]]] } } },
              },
            ],
          },
        ],
      },
    });
    expect(res.status).toBe(200);
  });
});

describe('deeply nested JSONL dataset lines', () => {
  it('reports the line instead of overflowing the stack', async () => {
    const { parseSftLine, SftDataError } = await import('@/lib/schemas/sft-data');
    const line = `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}],"tools":${nested(50_000, 'array')}}`;
    expect(() => parseSftLine('train.jsonl', 3, line)).toThrow(SftDataError);
    expect(() => parseSftLine('train.jsonl', 3, line)).toThrow(/nested more than/);
  });
});
