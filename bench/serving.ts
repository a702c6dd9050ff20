/**
 * `npm run bench:serving`: the server as clients see it (loopback only, bounded). Starts a production server
 * on a fresh embedded database and measures, on the built-in engine (tuneboard/tiny-random):
 * - time to first token (first content chunk of a stream) for a ~100-token prompt;
 * - decode tokens/s for 1 stream and 8 concurrent streams (aggregate), through HTTP + SSE;
 * - /v1/health latency while the 8 streams generate;
 * - API latency (GET checkpoints) while an SFT job trains in the built-in runner.
 * --quick: fewer and shorter completions and a smaller SFT dataset (CI runs this so it cannot break unnoticed).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { percentile } from './percentile';
import { startServer } from './server';

const ROOT = path.resolve(import.meta.dirname, '..');
const PORT = 3220;
const BASE = `http://127.0.0.1:${PORT}`;
const MODEL = process.env.BENCH_MODEL ?? 'tuneboard/tiny-random';
const QUICK = process.argv.includes('--quick');
const TTFT_RUNS = QUICK ? 3 : 10;
const DECODE_TOKENS = QUICK ? 32 : 128;
const SFT_LINES = QUICK ? 32 : 256;

async function json<T>(p: string, init: RequestInit & { key?: string } = {}): Promise<T> {
  const res = await fetch(`${BASE}${p}`, {
    ...init,
    headers: {
      'content-type': 'application/json',
      ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
      ...init.headers,
    },
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${JSON.stringify(body)}`);
  return body as T;
}

/** One streamed completion: ms to the first content chunk, total ms, completion tokens. */
async function stream(
  key: string,
  prompt: string,
  maxTokens: number,
): Promise<{ ttft: number; total: number; tokens: number }> {
  const started = performance.now();
  const res = await fetch(`${BASE}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content: prompt }],
      max_tokens: maxTokens,
      ignore_eos: true,
      temperature: 1,
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ttft = NaN;
  let tokens = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let at: number;
    while ((at = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const chunk = JSON.parse(event.slice(6));
      if (Number.isNaN(ttft) && chunk.choices?.[0]?.logprobs) ttft = performance.now() - started;
      if (chunk.usage) tokens = chunk.usage.completion_tokens;
    }
  }
  return { ttft, total: performance.now() - started, tokens };
}

async function sampleLatency(url: string, key: string | undefined, until: () => boolean): Promise<number[]> {
  const out: number[] = [];
  while (!until()) {
    const t = performance.now();
    await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {} }).then((r) => r.arrayBuffer());
    out.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
  return out;
}

async function main() {
  if (!fs.existsSync(path.join(ROOT, '.next', 'BUILD_ID')))
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const dir = path.join(ROOT, '.data', 'bench-serving');
  fs.rmSync(dir, { recursive: true, force: true });
  const server = await startServer(PORT, {
    DATABASE_URL: '',
    TUNEBOARD_DATA_DIR: path.join(dir, 'pglite'),
    TUNEBOARD_ARTIFACT_DIR: path.join(dir, 'artifacts'),
  });
  try {
    await json('/v1/auth/sign-up', {
      method: 'POST',
      body: JSON.stringify({ email: 'bench@bench.test', password: 'bench-password', username: 'bench' }),
    });
    const { key } = await json<{ key: string }>('/v1/auth/token', {
      method: 'POST',
      body: JSON.stringify({ email: 'bench@bench.test', password: 'bench-password' }),
    });
    // ~100 prompt tokens once templated (byte-level tokenizer: one token per byte).
    const prompt = 'Please continue this sentence about a quiet library in the middle of a small town at dusk';
    await stream(key, prompt, 4); // warm the worker threads and the model cache

    const ttfts: number[] = [];
    for (let i = 0; i < TTFT_RUNS; i++) ttfts.push((await stream(key, prompt, 1)).ttft);
    const one = await stream(key, prompt, DECODE_TOKENS);
    const oneRate = one.tokens / ((one.total - one.ttft) / 1000);

    let generating = true;
    const health = sampleLatency(`${BASE}/v1/health`, undefined, () => !generating);
    const t0 = performance.now();
    const eight = await Promise.all(Array.from({ length: 8 }, () => stream(key, prompt, DECODE_TOKENS)));
    const eightSeconds = (performance.now() - t0) / 1000;
    generating = false;
    const healthMs = await health;
    const eightRate = eight.reduce((a, r) => a + r.tokens, 0) / eightSeconds;

    // An SFT job in the built-in runner, and the API's latency while it trains.
    const model = await json<{ id: string }>('/v1/preview/models', {
      method: 'POST',
      key,
      body: JSON.stringify({ project: 'bench', name: 'sft', base_model: MODEL }),
    });
    const lines = Array.from({ length: SFT_LINES }, (_, i) =>
      JSON.stringify({
        messages: [
          { role: 'user', content: `What is ${i} + ${i}?` },
          { role: 'assistant', content: String(2 * i) },
        ],
      }),
    ).join('\n');
    const dataset = await fetch(`${BASE}/v1/preview/datasets?project=bench&name=sft`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: lines,
    }).then((r) => r.json());
    const job = await json<{ id: string }>('/v1/preview/sft-training-jobs', {
      method: 'POST',
      key,
      body: JSON.stringify({
        model_id: model.id,
        training_data_url: dataset.training_data_url,
        config: { batch_size: 8 },
      }),
    });
    let status = 'QUEUED';
    while (status === 'QUEUED') {
      status = (await json<{ status: string }>(`/v1/preview/training-jobs/${job.id}`, { key })).status;
      await new Promise((r) => setTimeout(r, 100));
    }
    let training = status === 'RUNNING';
    const poll = (async () => {
      while (training) {
        status = (await json<{ status: string }>(`/v1/preview/training-jobs/${job.id}`, { key })).status;
        training = status === 'RUNNING';
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const apiMs = await sampleLatency(
      `${BASE}/v1/preview/models/${model.id}/checkpoints?limit=20`,
      key,
      () => !training,
    );
    await poll;

    const fmt = (v: number) => v.toFixed(1);
    console.log(`\nserving benchmark (${MODEL}, production build, embedded database)\n`);
    console.log('| measure | value |');
    console.log('|---|---|');
    console.log(
      `| time to first token, ~100-token prompt (p50 / max of ${TTFT_RUNS}) | ${fmt(percentile(ttfts, 50))} ms / ${fmt(Math.max(...ttfts))} ms |`,
    );
    console.log(`| 1 stream, decode | ${fmt(oneRate)} tokens/s |`);
    console.log(
      `| 8 concurrent streams, aggregate | ${fmt(eightRate)} tokens/s (${fmt(eightRate / oneRate)}× one stream) |`,
    );
    console.log(
      `| /v1/health during the 8 streams (p50 / p99 / max, n=${healthMs.length}) | ${fmt(percentile(healthMs, 50))} / ${fmt(percentile(healthMs, 99))} / ${fmt(Math.max(...healthMs))} ms |`,
    );
    console.log(
      `| GET checkpoints while SFT trains (p50 / p99 / max, n=${apiMs.length}) | ${fmt(percentile(apiMs, 50))} / ${fmt(percentile(apiMs, 99))} / ${fmt(Math.max(...apiMs))} ms |`,
    );
    console.log(`| SFT job final status | ${status} |`);
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
