import { afterEach, describe, expect, it } from 'vitest';
import { createUser, type TestUser } from '../support/helpers';
import { postDataset } from '../support/datasets';

/**
 * Dataset uploads (issue 42 item 3): admitted like other large bodies (TUNEBOARD_MAX_LARGE_REQUESTS), metadata.json
 * and each JSONL line capped, and the lines parsed off the request thread. Limits are lowered by env so that the
 * bytes stay small (four 156 MB uploads against a built server were measured by hand for issue 42).
 */
const NAMES = ['TUNEBOARD_MAX_SMALL_BODY_MB', 'TUNEBOARD_MAX_DATASET_LINE_MB', 'TUNEBOARD_MAX_LARGE_REQUESTS'] as const;
const saved = Object.fromEntries(NAMES.map((n) => [n, process.env[n]]));
afterEach(() => {
  for (const name of NAMES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

const line = (q: string, a: string) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: q },
      { role: 'assistant', content: a },
    ],
  });

function post(user: TestUser, name: string, body: BodyInit, headers: Record<string, string> = {}) {
  return postDataset(user, { project: 'up', name }, body, headers);
}

/** An upload that declares a large length and sends its first line, then holds until `finish()` sends the rest. */
function slowUpload(user: TestUser, name: string) {
  let finish!: () => void;
  let started!: () => void;
  const reading = new Promise<void>((resolve) => (started = resolve));
  const first = new TextEncoder().encode(`${line('a', 'b')}\n`);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(first);
      finish = () => {
        controller.enqueue(new TextEncoder().encode(`${line('c', 'd')}\n`));
        controller.close();
      };
    },
    pull() {
      // The route has taken the first chunk: it is reading this upload (and holds its slot, if any).
      started();
    },
  });
  const response = post(user, name, body, { 'content-length': String(64 * 1024) });
  return { response, reading, finish: () => finish() };
}

describe('POST /v1/preview/datasets: admission, limits, parsing off the request thread', () => {
  it('takes a large-request slot: past TUNEBOARD_MAX_LARGE_REQUESTS an upload gets 429 with Retry-After', async () => {
    const user = await createUser();
    process.env.TUNEBOARD_MAX_SMALL_BODY_MB = String(16 / 1024); // 16 KiB
    process.env.TUNEBOARD_MAX_LARGE_REQUESTS = '2';
    const held = [slowUpload(user, 'one'), slowUpload(user, 'two')];
    await Promise.all(held.map((h) => h.reading));
    const big = `${line('q', 'x'.repeat(20 * 1024))}\n`;
    const third = await post(user, 'three', big, { 'content-length': String(Buffer.byteLength(big)) });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Chunked (no declared length): admitted once it is found to be large, and refused the same way.
    const chunked = await post(user, 'four', new Blob([big]).stream());
    expect(chunked.status).toBe(429);
    // A small upload never waits for large ones.
    expect((await post(user, 'small', `${line('s', 't')}\n`)).status).toBe(201);
    for (const h of held) h.finish();
    for (const h of held) expect((await h.response).status).toBe(201);
    // The slots are given back: the large upload goes through now.
    expect((await post(user, 'three', big, { 'content-length': String(Buffer.byteLength(big)) })).status).toBe(201);
  });

  it('refuses a line past TUNEBOARD_MAX_DATASET_LINE_MB with 422 naming the file and line', async () => {
    const user = await createUser();
    process.env.TUNEBOARD_MAX_DATASET_LINE_MB = String(16 / 1024); // 16 KiB
    const body = [line('a', 'b'), '', line('q', 'x'.repeat(20 * 1024)), line('c', 'd')].join('\n');
    const res = await post(user, 'long-line', body);
    expect(res.status).toBe(422);
    const detail = ((await res.json()) as { detail: { msg: string }[] }).detail;
    expect(detail[0].msg).toBe(
      'Value error, train.jsonl line 3: longer than 16384 bytes (TUNEBOARD_MAX_DATASET_LINE_MB)',
    );
  });

  it('refuses a metadata.json past 1 MiB with 413 naming it', async () => {
    const user = await createUser();
    const form = new FormData();
    form.append('file', new Blob([`${line('a', 'b')}\n`]), 'trajectories.jsonl');
    form.append('file', new Blob([JSON.stringify({ notes: 'n'.repeat(1024 * 1024) })]), 'metadata.json');
    const res = await post(user, 'meta', form);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ detail: 'metadata.json is larger than 1 MiB' });
  });
});
