import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createUser, TEST_BASE_MODEL } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';

/**
 * Serving settings that must take effect on the chat path (issue: TUNEBOARD_MAX_LOGPROBS was parsed and documented
 * but never reached the checks). An isolated file: it changes process.env.
 */
const client = (key: string) =>
  new OpenAI({ apiKey: key, baseURL: 'http://localhost:3000/v1', fetch: routeFetch, maxRetries: 0 });

describe('chat settings', () => {
  it('applies TUNEBOARD_MAX_LOGPROBS to top_logprobs and prompt_logprobs', async () => {
    const user = await createUser();
    const sdk = client(user.key);
    const base = { model: TEST_BASE_MODEL, messages: [{ role: 'user' as const, content: 'x' }], max_tokens: 2 };
    const saved = process.env.TUNEBOARD_MAX_LOGPROBS;
    process.env.TUNEBOARD_MAX_LOGPROBS = '3';
    try {
      await expect(sdk.chat.completions.create({ ...base, logprobs: true, top_logprobs: 4 })).rejects.toMatchObject({
        status: 400,
        param: 'top_logprobs',
        message: expect.stringContaining('Requested sample logprobs of 4, which is greater than max allowed: 3'),
      });
      await expect(
        // @ts-expect-error vLLM's extension
        sdk.chat.completions.create({ ...base, prompt_logprobs: 4 }),
      ).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('Requested prompt logprobs of 4, which is greater than max allowed: 3'),
      });
      const ok = await sdk.chat.completions.create({ ...base, logprobs: true, top_logprobs: 3 });
      expect(ok.choices[0].logprobs!.content![0].top_logprobs).toHaveLength(3);
      // Past vLLM's own default of 20 once the setting allows it.
      process.env.TUNEBOARD_MAX_LOGPROBS = '25';
      const many = await sdk.chat.completions.create({ ...base, logprobs: true, top_logprobs: 25 });
      expect(many.choices[0].logprobs!.content![0].top_logprobs).toHaveLength(25);
    } finally {
      if (saved === undefined) delete process.env.TUNEBOARD_MAX_LOGPROBS;
      else process.env.TUNEBOARD_MAX_LOGPROBS = saved;
    }
  });
});
