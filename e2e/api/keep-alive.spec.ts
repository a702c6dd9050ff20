import { expect, test } from '@playwright/test';

/**
 * `npm start` keeps idle connections open for 65 s (package.json, `--keepAliveTimeout`), not Node's 5 s. A client
 * that reuses a pooled connection after being idle for about 5 s (a job poller, Playwright's own request context,
 * Python's requests) otherwise sends its request just as the server closes the connection, and gets a reset
 * (ECONNRESET) instead of an answer: the Jobs spec failed that way once in CI, on a POST after 5.8 s idle.
 */
test('the server keeps an idle connection open for 65 s and says so', async ({ request }) => {
  const res = await request.get('/v1/health');
  expect(res.status()).toBe(200);
  expect(res.headers()['keep-alive']).toBe('timeout=65');
});
