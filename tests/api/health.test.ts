import { describe, expect, it } from 'vitest';
import * as catchAllRoute from '@/app/v1/[...path]/route';
import * as healthRoute from '@/app/v1/health/route';
import * as systemCheckRoute from '@/app/v1/system-check/route';
import { healthSchema, systemCheckSchema } from '@/lib/schemas/health';
import { call } from '../support/helpers';

describe('GET /v1/health', () => {
  it('answers 200 {"status":"ok"} as JSON', async () => {
    const res = await call(healthRoute, 'GET', '/v1/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(healthSchema.parse(res.body)).toEqual({ status: 'ok' });
  });

  it('ignores any Authorization header, even a garbage one', async () => {
    for (const authorization of ['Bearer tb_not-a-real-key', 'Basic Zm9vOmJhcg==', 'garbage', '']) {
      const res = await call(healthRoute, 'GET', '/v1/health', { headers: { authorization } });
      expect(res.status, authorization).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    }
    const cookie = await call(healthRoute, 'GET', '/v1/health', { cookie: 'tb_session=forged' });
    expect(cookie.status).toBe(200);
  });

  it('answers other methods with a JSON 405', async () => {
    const res = await call(healthRoute, 'POST', '/v1/health', { body: {} });
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ detail: 'Method Not Allowed' });
    expect(res.headers.get('allow')).toBe('GET');
  });
});

describe('GET /v1/system-check', () => {
  it('answers 200 with api, database and both queue checks', async () => {
    const res = await call(systemCheckRoute, 'GET', '/v1/system-check', {
      headers: { authorization: 'Bearer tb_garbage' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const body = systemCheckSchema.parse(res.body);
    expect(Object.keys(res.body).sort()).toEqual(['api', 'cpu_queue', 'database', 'gpu_queue']);
    expect(body.api).toBe(true);
    expect(body.database).toBe(true);
    for (const queue of [body.cpu_queue, body.gpu_queue]) {
      expect(queue.success).toBe(true);
      expect(queue.error).toBeNull();
      expect(queue.duration).toBeGreaterThanOrEqual(0);
      expect(queue.duration).toBeLessThan(5);
    }
  });
});

describe('unknown /v1 paths', () => {
  it('answer a JSON 404 {"detail":"Not Found"} for every method, with or without auth', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await call(catchAllRoute, method, '/v1/preview/nothing/here', {
        params: { path: ['preview', 'nothing', 'here'] },
        headers: { authorization: 'Bearer tb_whatever' },
        ...(method === 'GET' ? {} : { body: { a: 1 } }),
      });
      expect(res.status, method).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.body).toEqual({ detail: 'Not Found' });
    }
  });
});
