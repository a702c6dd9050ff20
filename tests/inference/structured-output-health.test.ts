import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { installFastPath } from '@/lib/api/fast-path';
import { createUser, TEST_BASE_MODEL, type TestUser } from '../support/helpers';
import { routeFetch } from '../support/route-fetch';

/**
 * Structured-output grammars are compiled off the request thread, and a schema is bounded (issue 42 item 2):
 * eight chat requests, each with a 15,000-entry enum schema, stalled /v1/health for up to 7.5 s while the request
 * thread compiled them. This file measures /v1/health's latency while they compile, so it runs in the timing project
 * (vitest.config.mts), alone on a quiet machine.
 */
function chat(user: TestUser, body: Record<string, unknown>) {
  return routeFetch('http://localhost:3000/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: TEST_BASE_MODEL, messages: [{ role: 'user', content: 'pick' }], ...body }),
  });
}

const enumSchema = (entries: number, salt: string) => ({
  type: 'string',
  enum: Array.from({ length: entries }, (_, i) => `${salt}-item-${i}-${(i * 7919) % 10007}`),
});

describe('structured outputs on the built-in engine, off the request thread', () => {
  it('compiles eight 15,000-entry enum schemas while health answers within 100 ms', { timeout: 180_000 }, async () => {
    const user = await createUser();
    // Eight different schemas (no compile is a cache hit), made before the measurement starts.
    const bodies = Array.from({ length: 8 }, (_, i) =>
      JSON.stringify({
        model: TEST_BASE_MODEL,
        messages: [{ role: 'user', content: 'pick' }],
        max_tokens: 3,
        response_format: { type: 'json_schema', json_schema: { name: 'pick', schema: enumSchema(15_000, `s${i}`) } },
      }),
    );
    // The model's first request in this process builds its template, tokenizer and inference threads: that one-off
    // cost is not what this test measures.
    expect((await chat(user, { max_tokens: 1 })).status).toBe(200);
    // Health as a production server answers it: the fast path's probe on a real socket (lib/api/fast-path.ts).
    const uninstall = installFastPath();
    const server = http.createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const healthUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/health`;
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    let healthMax = 0;
    let probes = 0;
    const latencies: number[] = [];
    let probing = true;
    // A probe every 10 ms; its latency counts from when it was due, as a prober's would (a stalled thread does not
    // even send it).
    const prober = (async () => {
      while (probing) {
        const due = performance.now() + 10;
        await new Promise((r) => setTimeout(r, 10));
        const res = await fetch(healthUrl);
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        latencies.push(performance.now() - due);
        healthMax = Math.max(healthMax, performance.now() - due);
        probes++;
      }
    })();
    const answers: Promise<Response>[] = [];
    for (const body of bodies) {
      answers.push(
        routeFetch('http://localhost:3000/v1/chat/completions', {
          method: 'POST',
          headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
          body,
        }),
      );
      // Each in a turn of its own, as requests read from sockets arrive (the fast path also starts handlers a share
      // per turn): started in one synchronous burst, their JSON parsing alone adds up to a stall of its own.
      await new Promise((r) => setImmediate(r));
    }
    const settled = await Promise.all(answers);
    probing = false;
    await prober;
    delay.disable();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    uninstall();
    for (const res of settled) {
      expect(res.status, await res.clone().text()).toBe(200);
      const content = ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0].message
        .content;
      // Three tokens of one of the enum's strings (a prefix of it: max_tokens cuts it).
      expect(content.startsWith('"')).toBe(true);
    }
    const p99 = latencies.sort((a, b) => a - b)[Math.floor(latencies.length * 0.99)];
    console.log(
      `${probes} health probes, p99 ${p99.toFixed(1)} ms, max ${healthMax.toFixed(1)} ms; event-loop delay max ${(delay.max / 1e6).toFixed(1)} ms`,
    );
    expect(probes).toBeGreaterThan(10);
    // Health within 100 ms (p99). The maximum gets more room: on a shared 2-core CI machine other processes and the
    // two inference threads compiling at full speed preempt this thread now and then for 100-200 ms (seen with load 8;
    // a quiet machine stays under 100). One of these schemas compiled on the request thread blocks it for about 2 s,
    // and the eight together for 18 s here before.
    expect(p99).toBeLessThan(100);
    expect(healthMax).toBeLessThan(500);
  });
});
