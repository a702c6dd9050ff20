import { describe, expect, it } from 'vitest';
import * as healthRoute from '@/app/v1/health/route';
import * as logRoute from '@/app/v1/preview/models/[model_id]/log/route';
import { call, createModel, createUser } from '../support/helpers';

/** A /log request whose body arrives slowly: it holds its admission slot until `finish()` sends the rest. */
function slowLog(key: string, modelId: string) {
  let finish!: () => void;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"split":"val","trajectory_groups":['));
      finish = () => {
        controller.enqueue(new TextEncoder().encode(']}'));
        controller.close();
      };
    },
  });
  const response = logRoute.POST(
    new Request(`http://localhost:3000/v1/preview/models/${modelId}/log`, {
      method: 'POST',
      body,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': String(100 * 1024 * 1024),
      },
      duplex: 'half',
    } as RequestInit),
    { params: Promise.resolve({ model_id: modelId }) },
  );
  return { response, finish: () => finish() };
}

describe('large request bodies are admitted a bounded number at a time', () => {
  it('answers 429 with Retry-After beyond the limit, and admits again once a slot frees', async () => {
    const user = await createUser();
    const model = await createModel(user);
    const held = [slowLog(user.key, model.id), slowLog(user.key, model.id)];
    await new Promise((r) => setTimeout(r, 50));
    const third = slowLog(user.key, model.id);
    const refused = await third.response;
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Small requests and health never wait for large ones.
    const small = await call(logRoute, 'POST', '/x', {
      key: user.key,
      params: { model_id: model.id },
      body: { split: 'val', trajectory_groups: [] },
    });
    expect(small.status).toBe(200);
    expect((await call(healthRoute, 'GET', '/v1/health')).status).toBe(200);

    for (const h of held) h.finish();
    for (const h of held) expect((await h.response).status).toBe(200);
    const next = slowLog(user.key, model.id);
    next.finish();
    expect((await next.response).status).toBe(200);
  });
});
