/**
 * The server's per-token cost of the built-in engine's SSE encoding (lib/inference/sse.ts): engine event →
 * chunk JSON → UTF-8 bytes, measured in-process without HTTP. Used by `npm run bench:gateway`; run alone
 * with `npx tsx bench/sse-encoding.ts`.
 */
import { ChatStreamEncoder } from '@/lib/inference/sse';
import { samplingFor, token } from '@/tests/support/inference';

export interface SseCost {
  case: string;
  usPerToken: number;
  bytesPerToken: number;
}

function measure(label: string, body: Record<string, unknown>, topN: number, tokens: number): SseCost {
  const spec = samplingFor({ stream: true, max_tokens: tokens + 1, ...body });
  const textEncoder = new TextEncoder();
  const events = Array.from({ length: tokens }, (_, i) => {
    const t = token(0, 1000 + (i % 500), ` word${i % 97}`, -0.25 - (i % 7) / 10);
    t.topLogprobs = Array.from({ length: Math.max(topN, 1) }, (_, k) => ({
      tokenId: 2000 + k,
      tokenText: ` alt${k}`,
      logprob: -1 - k / 3,
    }));
    return t;
  });
  let bytes = 0;
  const runOnce = () => {
    const enc = new ChatStreamEncoder(spec, { created: 1767225600, promptTokenIds: [1, 2, 3] });
    enc.start();
    for (const e of events) for (const frame of enc.push(e)) bytes += textEncoder.encode(frame).byteLength;
  };
  for (let i = 0; i < 3; i++) runOnce(); // warm the JIT
  // The fastest of several rounds: on a shared machine the others measure the neighbours.
  let best = Infinity;
  for (let i = 0; i < 15; i++) {
    bytes = 0;
    const t0 = performance.now();
    runOnce();
    best = Math.min(best, performance.now() - t0);
  }
  return { case: label, usPerToken: (best * 1000) / tokens, bytesPerToken: bytes / tokens };
}

export function measureSseEncoding(quick: boolean): SseCost[] {
  const tokens = quick ? 500 : 4000;
  return [
    measure('content only', {}, 0, tokens),
    measure('logprobs, top_logprobs 5', { logprobs: true, top_logprobs: 5 }, 5, tokens),
    measure('logprobs, top_logprobs 20', { logprobs: true, top_logprobs: 20 }, 20, tokens),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of measureSseEncoding(process.argv.includes('--quick'))) {
    console.log(`${r.case}: ${r.usPerToken.toFixed(2)} µs/token, ${Math.round(r.bytesPerToken)} bytes/token`);
  }
}
