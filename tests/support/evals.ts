import * as evalSetsRoute from '@/app/v1/preview/eval-sets/route';
import { evalSetSchema } from '@/lib/schemas/evals';
import { uniqueName, type TestUser } from '../helpers';

/** POST /v1/preview/eval-sets as `user`, through the route's own handler (a streamed body, as a client sends it). */
export async function postEvalSet(
  user: TestUser,
  query: Record<string, string>,
  body: BodyInit,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const url = new URL('/v1/preview/eval-sets', 'http://localhost:3000');
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  const res = await evalSetsRoute.POST(
    new Request(url, {
      method: 'POST',
      body,
      // A FormData body sets its own multipart content type.
      headers: {
        authorization: `Bearer ${user.key}`,
        ...(typeof body === 'string' ? { 'content-type': 'application/jsonl' } : {}),
        ...headers,
      },
      duplex: 'half',
    } as RequestInit),
    { params: Promise.resolve({}) },
  );
  return { status: res.status, body: await res.json() };
}

export const evalLine = (question: string, reference?: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    messages: [{ role: 'user', content: question }],
    ...(reference === undefined ? {} : { reference }),
    ...extra,
  });

/** Uploads a set of `lines` (JSON texts) and returns it. */
export async function createEvalSet(user: TestUser, lines: string[], name = uniqueName('set-'), project = 'evals') {
  const res = await postEvalSet(user, { project, name }, lines.join('\n') + '\n');
  if (res.status !== 201) throw new Error(`eval set upload failed: ${JSON.stringify(res.body)}`);
  return evalSetSchema.parse(res.body);
}
