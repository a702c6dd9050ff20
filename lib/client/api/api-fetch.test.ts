import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ApiClientError, apiFetch, errorFromResponseBody } from './api-fetch';

function respond(status: number, body: unknown, contentType = 'application/json') {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return vi.fn(async () => new Response(text, { status, headers: { 'content-type': contentType } }));
}

afterEach(() => vi.unstubAllGlobals());

describe('apiFetch', () => {
  it('sends credentials and JSON, and parses the answer with the schema', async () => {
    const fetchMock = respond(201, { id: 'a', extra: true });
    vi.stubGlobal('fetch', fetchMock);
    const data = await apiFetch('/v1/things', z.object({ id: z.string() }), { method: 'POST', json: { name: 'x' } });
    expect(data).toEqual({ id: 'a' });
    const [path, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(path).toBe('/v1/things');
    expect(init.credentials).toBe('same-origin');
    expect(init.body).toBe('{"name":"x"}');
    expect(new Headers(init.headers).get('content-type')).toBe('application/json');
  });

  it('turns a string detail into the message', async () => {
    vi.stubGlobal('fetch', respond(401, { detail: 'Invalid email or password' }));
    const error = await apiFetch('/v1/auth/sign-in', z.object({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiClientError);
    expect(error).toMatchObject({ status: 401, message: 'Invalid email or password', fieldErrors: {} });
  });

  it('turns a 422 list into a readable message and per-field errors', async () => {
    vi.stubGlobal(
      'fetch',
      respond(422, {
        detail: [
          { loc: ['body', 'email'], msg: 'Value error, must be an email address', type: 'value_error' },
          { loc: ['body', 'password'], msg: 'String should have at least 8 characters', type: 'string_too_short' },
          { loc: ['body', 'password'], msg: 'second problem', type: 'x' },
        ],
      }),
    );
    const error = (await apiFetch('/v1/auth/sign-up', z.object({})).catch((e: unknown) => e)) as ApiClientError;
    expect(error.status).toBe(422);
    expect(error.message).toBe(
      'email: Must be an email address; password: String should have at least 8 characters; password: Second problem',
    );
    expect(error.fieldErrors).toEqual({
      email: 'Must be an email address',
      password: 'String should have at least 8 characters',
    });
  });

  it('explains a body that is not JSON by its status', async () => {
    vi.stubGlobal('fetch', respond(502, '<html>Bad gateway</html>', 'text/html'));
    await expect(apiFetch('/v1/x', z.object({}))).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/server/),
    });
  });

  it('reports an answer that does not match the schema', async () => {
    vi.stubGlobal('fetch', respond(200, { id: 42 }));
    await expect(apiFetch('/v1/x', z.object({ id: z.string() }))).rejects.toMatchObject({
      status: 200,
      message: expect.stringMatching(/does not understand/),
    });
  });

  it('reports a network failure with status 0', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))),
    );
    await expect(apiFetch('/v1/x', z.object({}))).rejects.toMatchObject({ status: 0 });
  });
});

describe('errorFromResponseBody', () => {
  it('keeps nested locations as dotted paths', () => {
    const error = errorFromResponseBody(422, {
      detail: [{ loc: ['query', 'limit'], msg: 'Input should be less than or equal to 100', type: 'x' }],
    });
    expect(error.fieldErrors).toEqual({ limit: 'Input should be less than or equal to 100' });
  });
});
