import * as datasetsRoute from '@/app/v1/preview/datasets/route';
import type { TestUser } from './helpers';

/** POST /v1/preview/datasets as `user`, through the route's own handler (a streamed body, as a client sends it). */
export function postDataset(
  user: TestUser,
  query: Record<string, string>,
  body: BodyInit,
  headers: Record<string, string> = {},
): Promise<Response> {
  const url = new URL('/v1/preview/datasets', 'http://localhost:3000');
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return datasetsRoute.POST(
    new Request(url, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${user.key}`, ...headers },
      duplex: 'half',
    } as RequestInit),
    { params: Promise.resolve({}) },
  );
}
