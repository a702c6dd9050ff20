import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../support/helpers';
import { postDataset } from '../support/datasets';

/**
 * A dataset upload's lines are parsed off the request thread (issue 42 item 3). This file measures the event loop's
 * longest stall, so it runs in the timing project (vitest.config.mts), alone on a quiet machine: beside the browser
 * specs in CI, other processes preempted this thread for 380 ms while the parsing itself was elsewhere.
 */
const saved = process.env.TUNEBOARD_MAX_DATASET_LINE_MB;
afterEach(() => {
  if (saved === undefined) delete process.env.TUNEBOARD_MAX_DATASET_LINE_MB;
  else process.env.TUNEBOARD_MAX_DATASET_LINE_MB = saved;
});

const line = (q: string, a: string) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: q },
      { role: 'assistant', content: a },
    ],
  });

describe('POST /v1/preview/datasets off the request thread', () => {
  it('parses the lines off the request thread: the event loop never stalls for 250 ms', async () => {
    const user = await createUser();
    process.env.TUNEBOARD_MAX_DATASET_LINE_MB = '64';
    // Two 48 MB lines: parsing them on the request thread stalled it for 900 ms here (24 MB lines: 250-280 ms).
    const long = line('q', 'x'.repeat(48 * 1024 * 1024));
    // Sent in 64 KiB chunks, as a socket delivers them (a Blob's stream hands over tens of MB at once, and copying
    // them is the test's own stall), encoded before the measurement starts.
    const bytes = Buffer.from([long, long].join('\n'));
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.subarray(at, (at += 64 * 1024)));
      },
    });
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const res = await postDataset(user, { project: 'up', name: 'heavy' }, body);
    delay.disable();
    expect(res.status, await res.clone().text()).toBe(201);
    expect(((await res.json()) as { num_examples: number }).num_examples).toBe(2);
    // Not 100 ms: on a shared 2-core CI machine other processes preempt this thread now and then for up to ~200 ms.
    expect(delay.max / 1e6).toBeLessThan(250);
  });
});
