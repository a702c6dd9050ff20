import { afterEach, describe, expect, it } from 'vitest';
import { createUser, TEST_BASE_MODEL, type TestUser } from '../helpers';
import { routeFetch } from '../route-fetch';

/**
 * Structured-output grammars are compiled off the request thread, and a schema is bounded (issue 42 item 2):
 * eight chat requests, each with a 15,000-entry enum schema, stalled /v1/health for up to 7.5 s while the request
 * thread compiled them.
 */
const saved = process.env.TUNEBOARD_MAX_STRUCTURED_OUTPUT_KB;
afterEach(() => {
  if (saved === undefined) delete process.env.TUNEBOARD_MAX_STRUCTURED_OUTPUT_KB;
  else process.env.TUNEBOARD_MAX_STRUCTURED_OUTPUT_KB = saved;
});

function chat(user: TestUser, body: Record<string, unknown>) {
  return routeFetch('http://localhost:3000/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: TEST_BASE_MODEL, messages: [{ role: 'user', content: 'pick' }], ...body }),
  });
}

describe('structured outputs on the built-in engine', () => {
  it('refuses a schema past TUNEBOARD_MAX_STRUCTURED_OUTPUT_KB with a 400 naming the limit', async () => {
    const user = await createUser();
    process.env.TUNEBOARD_MAX_STRUCTURED_OUTPUT_KB = '16';
    for (const stream of [false, true]) {
      const res = await chat(user, {
        stream,
        max_tokens: 2,
        structured_outputs: { choice: Array.from({ length: 2000 }, (_, i) => `choice number ${i}`) },
      });
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as { error: { message: string; param: string; type: string } };
      expect(error.param).toBe('structured_outputs');
      expect(error.type).toBe('BadRequestError');
      expect(error.message).toMatch(
        /^structured_outputs\.choice is \d+ bytes of JSON; the built-in engine compiles at most 16384 \(TUNEBOARD_MAX_STRUCTURED_OUTPUT_KB\)$/,
      );
    }
    // Under the bound it is served.
    const ok = await chat(user, { max_tokens: 2, structured_outputs: { choice: ['yes', 'no'] } });
    expect(ok.status).toBe(200);
  });

  it('answers a grammar the engine cannot compile with a 400 before the first byte, streamed or not', async () => {
    const user = await createUser();
    for (const stream of [false, true]) {
      const res = await chat(user, { stream, max_tokens: 2, structured_outputs: { regex: '(?<=a)b' } });
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as { error: { message: string; param: string } };
      expect(error.param).toBe('structured_outputs');
      expect(error.message).toContain('structured_outputs.regex could not be compiled');
    }
  });
});
