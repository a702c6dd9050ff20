/**
 * Training throughput of the built-in engine next to PyTorch CPU on the same shapes:
 *   npm run bench:train            (add -- --quick for fewer steps and the first shape only: CI's smoke test;
 *                                   the second shape runs the same code, and took 22 of its 38 s)
 * Each engine measurement runs in its own child process so its peak RSS is its own. PyTorch runs
 * bench/anchors/torch_tiny_gpt.py with the first Python that imports torch (TUNEBOARD_BENCH_PYTHON, the
 * active venv, PATH, Debian's python3-torch; see torch-python.ts), one thread, like the engine (one thread
 * per worker).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { config } from '../lib/config';
import { findTorchPython } from './torch-python';

interface Shape {
  label: string;
  layers: number;
  d: number;
  ctx: number;
  batch: number;
}

const SHAPES: Shape[] = [
  { label: '2L d128 ctx128 b8', layers: 2, d: 128, ctx: 128, batch: 8 },
  { label: '4L d256 ctx128 b8', layers: 4, d: 256, ctx: 128, batch: 8 },
];
const VOCAB = 261; // the byte tokenizer's vocabulary
const MACHINE_PEAK_GFLOPS = 166;

/**
 * The PyTorch anchor is a GPT with a GELU MLP of 4·d (8·d² weights per layer). SwiGLU has three matrices,
 * so d_ff = 8·d/3 (rounded to a multiple of 8) gives the same weights and matmul FLOPs per token.
 */
const dff = (d: number) => Math.round((8 * d) / 3 / 8) * 8;
const heads = (d: number) => Math.max(1, d / 64);

/** Matmul FLOPs per trained token: forward 2·(weights) + attention over the full ctx×ctx block; backward 2×. */
function flopsPerToken(s: Shape): number {
  const perLayer = 4 * s.d * s.d + 3 * s.d * dff(s.d);
  const forward = 2 * (s.layers * perLayer + VOCAB * s.d) + s.layers * 4 * s.ctx * s.d;
  return 3 * forward;
}

interface ChildResult {
  tokensPerSecond: number;
  stepMs: number;
  peakRssMb: number;
  heapMb: number;
  variant: string;
}

async function child(kind: 'sft' | 'sft2' | 'rl', shape: Shape, steps: number): Promise<ChildResult> {
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  const { Model } = await import('../lib/engine/model');
  const { Tokenizer } = await import('../lib/engine/tokenizer');
  const { trainSft } = await import('../lib/engine/train/sft');
  const { trainRl } = await import('../lib/engine/train/rl');
  const tokenizer = new Tokenizer();
  const model = Model.create(
    {
      vocab: VOCAB,
      d_model: shape.d,
      n_layers: shape.layers,
      n_heads: heads(shape.d),
      n_kv_heads: heads(shape.d),
      d_ff: dff(shape.d),
      ctx: shape.ctx,
      rope_theta: 10000,
      norm_eps: 1e-5,
      tie_embeddings: true,
    },
    { seed: 1 },
  );
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  const text = (i: number) =>
    Array.from({ length: shape.ctx * 2 }, (_, j) => String.fromCharCode(97 + ((i * 7 + j * 3) % 26))).join('');
  const times: number[] = [];
  let tokens = 0;
  if (kind === 'sft' || kind === 'sft2') {
    // sft2: half of each batch on a helper thread (lib/jobs/worker/training-threads.ts), as the worker process runs it.
    const { SftHelperThread } = await import('../lib/jobs/worker/training-threads');
    const helper =
      kind === 'sft2'
        ? SftHelperThread.create(model.config, path.resolve(__dirname, '../lib/jobs/worker/worker-main.ts'))
        : null;
    // Every example is truncated to exactly ctx tokens; one batch = one optimizer step.
    const examples = Array.from({ length: shape.batch }, (_, i) => ({
      line: i + 1,
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: text(i) },
      ],
    }));
    let last = performance.now();
    await trainSft(model, tokenizer, Array.from({ length: steps + 2 }, () => examples).flat(), {
      batchSize: shape.batch,
      learningRate: 1e-4,
      assistantTurns: 'all',
      onStep: () => {
        const now = performance.now();
        times.push(now - last);
        last = now;
      },
      ...(helper ? { helper } : {}),
    });
    await helper?.close();
    tokens = shape.batch * shape.ctx;
  } else {
    // One group of `batch` trajectories, each a ctx-token history: one optimizer step per history (docs/contract.md §5.3).
    const ids = (i: number) => tokenizer.encode(text(i)).slice(0, shape.ctx - 10);
    const group = {
      exceptions: [],
      trajectories: Array.from({ length: shape.batch }, (_, i) => ({
        reward: i % 2,
        messages_and_choices: [
          { role: 'user', content: 'q' },
          {
            finish_reason: 'stop',
            index: 0,
            message: { role: 'assistant', content: '' },
            logprobs: { content: ids(i).map((id) => ({ token: `token_id:${id}`, logprob: -2 })) },
          },
        ],
      })),
    };
    const config = {
      loss: 'cispo' as const,
      epsilon: 1,
      epsilon_high: 4,
      advantage_balance: 0,
      tau: null,
      learning_rate: 1e-5,
      mask_prob_ratio: false,
      max_negative_advantage_importance_sampling_weight: null,
      precalculate_logprobs: false,
      scale_rewards: true,
      importance_sampling_level: 'token' as const,
      allow_training_without_logprobs: false,
    };
    for (let r = 0; r < Math.max(2, Math.ceil(steps / shape.batch) + 1); r++) {
      let last = performance.now();
      await trainRl(model, tokenizer, [group], {
        config,
        onStep: () => {
          const now = performance.now();
          times.push(now - last);
          last = now;
        },
      });
    }
    tokens = shape.ctx;
  }
  clearInterval(sampler);
  // Skip the warm-up steps; the median is robust to the other work on a shared machine.
  const measured = times.slice(2).sort((a, b) => a - b);
  const stepMs = measured[Math.floor(measured.length / 2)];
  const maxRss = process.resourceUsage().maxRSS / 1024;
  return {
    tokensPerSecond: (tokens / stepMs) * 1000,
    stepMs,
    peakRssMb: Math.max(peakRss / 1048576, maxRss),
    heapMb: model.heap.bytesReserved / 1048576,
    variant: model.heap.variant,
  };
}

let torchPython: ReturnType<typeof findTorchPython> | undefined;

function torch(shape: Shape, steps: number, threads: number): { tokensPerSecond: number; line: string } | null {
  torchPython ??= findTorchPython({
    explicit: config.benchPython,
    virtualEnv: config.virtualEnv,
    pathVar: config.searchPath,
  });
  if (!torchPython) {
    console.error(
      '[bench] PyTorch not found in TUNEBOARD_BENCH_PYTHON, $VIRTUAL_ENV, PATH or /usr/bin/python3: pip install torch, or apt-get install -y python3-torch',
    );
    return null;
  }
  const script = path.resolve(__dirname, 'anchors/torch_tiny_gpt.py');
  const res = spawnSync(
    torchPython.python,
    [script, ...[shape.layers, shape.d, shape.ctx, shape.batch, VOCAB, steps, threads].map(String)],
    {
      encoding: 'utf8',
      timeout: 300_000,
    },
  );
  const line = res.stdout?.split('\n').find((l) => l.includes('train_tok/s')) ?? '';
  const m = /train_tok\/s=(\d+)/.exec(line);
  if (!m) {
    console.error(
      `[bench] PyTorch (${torchPython.python}) did not run: ${res.stderr?.trim().split('\n').at(-1) ?? res.error?.message}`,
    );
    return null;
  }
  return { tokensPerSecond: Number(m[1]), line };
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--child') {
    const [, kind, index, steps] = args;
    const result = await child(kind as 'sft' | 'sft2' | 'rl', SHAPES[Number(index)], Number(steps));
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
    return;
  }
  const quick = args.includes('--quick');
  const steps = quick ? 4 : 10;
  console.log(
    `node ${process.version}; machine peak ≈ ${MACHINE_PEAK_GFLOPS} GFLOP/s (2 cores); engine: one thread (SFT 2 threads: + a helper thread); PyTorch: 1 thread; ` +
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} (other work on the machine lowers every figure)`,
  );
  const rows: string[][] = [];
  for (const [i, shape] of SHAPES.entries()) {
    if (quick && i > 0) break;
    const t = torch(shape, steps, 1);
    const fpt = flopsPerToken(shape);
    for (const kind of ['sft', 'sft2', 'rl'] as const) {
      const out = execFileSync(
        process.execPath,
        ['--import', 'tsx', __filename, '--child', kind, String(i), String(steps)],
        {
          encoding: 'utf8',
          cwd: path.resolve(__dirname, '..'),
        },
      );
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (!line) throw new Error(`child produced no result:\n${out}`);
      const r = JSON.parse(line.slice(7)) as ChildResult;
      const gflops = (fpt * r.tokensPerSecond) / 1e9;
      rows.push([
        shape.label,
        kind === 'sft2' ? 'SFT 2 threads' : kind.toUpperCase(),
        r.tokensPerSecond.toFixed(0),
        t ? t.tokensPerSecond.toFixed(0) : 'n/a',
        t ? `${((r.tokensPerSecond / t.tokensPerSecond) * 100).toFixed(0)} %` : 'n/a',
        r.stepMs.toFixed(1),
        gflops.toFixed(1),
        `${((gflops / MACHINE_PEAK_GFLOPS) * 100).toFixed(0)} %`,
        r.peakRssMb.toFixed(0),
        r.heapMb.toFixed(0),
        r.variant,
      ]);
    }
    if (t) console.log(`  ${t.line}`);
  }
  console.log(
    `load average after: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const header = [
    'shape',
    'job',
    'engine tok/s',
    'PyTorch tok/s',
    'engine/PyTorch',
    'step ms',
    'GFLOP/s',
    'of peak',
    'peak RSS MB',
    'wasm heap MB',
    'kernels',
  ];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const fmt = (r: string[]) => r.map((v, c) => v.padStart(widths[c])).join('  ');
  console.log(fmt(header));
  for (const r of rows) console.log(fmt(r));
  console.log(
    `SwiGLU d_ff = 8·d/3 (${SHAPES.map((s) => dff(s.d)).join(', ')}) matches the anchor's 4·d GELU MLP in weights and FLOPs; ` +
      'RL steps are one history (ctx tokens) each, as docs/contract.md §5.3 prescribes without packing.',
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
