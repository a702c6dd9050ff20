/**
 * An RL loop as real clients (OpenPipe ART's serverless backend) run it, against a Tuneboard server:
 *
 *   for each step: roll out with /v1/chat/completions (n samples per prompt, logprobs come back on every
 *   choice) → score each completion → POST /v1/preview/training-jobs with the trajectory groups → poll the
 *   job's events until training_ended → the next rollouts use the new checkpoint (`entity/project/name`).
 *
 * Run:  npx tsx examples/rl-loop.ts --base-url http://localhost:3000 --key $TUNEBOARD_API_KEY [--steps 6]
 *       [--base-model Qwen/Qwen3-0.6B] [--project rl-demo] [--group-size 4] [--lr 2e-3] [--seed 1]
 *
 * The task is a smoke task a tiny byte-level model can move on from random weights: the reward is the
 * fraction of lower-case letters in the reply. With the pretrained chat model, swap in an exact-match task.
 */
import OpenAI from 'openai';

export interface RlLoopOptions {
  baseURL: string;
  apiKey: string;
  steps: number;
  baseModel?: string;
  project?: string;
  /** Completions per prompt: the group size. */
  groupSize?: number;
  learningRate?: number;
  /**
   * Seeds every rollout (the chat request's `seed`, distinct per step and prompt), which makes the whole loop
   * reproducible: sampling is then the only randomness, and training is deterministic. Unset: unseeded.
   */
  seed?: number;
  fetch?: typeof fetch;
  log?: (line: string) => void;
  /** Called once the model record exists (tests pin their in-process trainer to it). */
  onModel?: (modelId: string) => void;
}

export interface RlLoopResult {
  modelId: string;
  inferenceName: string;
  /** Mean reward of each step's rollouts, step 0 = before any training. */
  rewards: number[];
}

const PROMPTS = ['Write a word.', 'Say something.', 'Name a thing.', 'Reply briefly.'];

export function reward(text: string): number {
  if (text.length === 0) return 0;
  let lower = 0;
  for (const ch of text) if (ch >= 'a' && ch <= 'z') lower++;
  return lower / [...text].length;
}

async function api<T>(opts: RlLoopOptions, path: string, init: RequestInit = {}): Promise<T> {
  const res = await (opts.fetch ?? fetch)(`${opts.baseURL.replace(/\/$/, '')}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${opts.apiKey}`, 'content-type': 'application/json', ...init.headers },
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(body)}`);
  return body as T;
}

async function waitForJob(opts: RlLoopOptions, jobId: string): Promise<void> {
  // The client's own polling: sleep, list events after the cursor, stop at a terminal event (docs/contract.md §3).
  let after: string | undefined;
  for (;;) {
    const page = await api<{ data: { id: string; type: string; data: Record<string, unknown> }[]; has_more: boolean }>(
      opts,
      `/v1/preview/training-jobs/${jobId}/events?limit=100${after ? `&after=${after}` : ''}`,
    );
    for (const event of page.data) {
      if (event.type === 'training_failed') throw new Error(`Training job failed: ${event.data.error_message}`);
      if (event.type === 'training_ended') return;
      if (event.type === 'gradient_step') after = event.id;
    }
    if (!page.has_more) await new Promise((r) => setTimeout(r, 250));
  }
}

export async function runRlLoop(opts: RlLoopOptions): Promise<RlLoopResult> {
  const log = opts.log ?? console.log;
  const groupSize = opts.groupSize ?? 8;
  const model = await api<{ id: string; entity: string; project: string; name: string }>(opts, '/v1/preview/models', {
    method: 'POST',
    body: JSON.stringify({
      entity: null,
      project: opts.project ?? 'rl-examples',
      name: `rl-loop-${Date.now().toString(36)}`,
      base_model: opts.baseModel ?? 'tuneboard/tiny-random',
      return_existing: true,
    }),
  });
  opts.onModel?.(model.id);
  const inferenceName = `wandb-artifact:///${model.entity}/${model.project}/${model.name}`;
  const client = new OpenAI({
    apiKey: opts.apiKey,
    baseURL: `${opts.baseURL.replace(/\/$/, '')}/v1`,
    fetch: opts.fetch,
    maxRetries: 2,
  });
  const rewards: number[] = [];

  for (let step = 0; step <= opts.steps; step++) {
    const groups = [];
    let total = 0;
    let count = 0;
    for (const [p, prompt] of PROMPTS.entries()) {
      const messages = [{ role: 'user' as const, content: prompt }];
      // Choice i of a seeded request samples with seed + i, so seeds are spaced by more than a group.
      const seed = opts.seed === undefined ? undefined : opts.seed + (step * PROMPTS.length + p) * 1000;
      const res = await client.chat.completions.create({
        model: inferenceName,
        messages,
        n: groupSize,
        max_tokens: 12,
        temperature: 1,
        ...(seed === undefined ? {} : { seed }),
      });
      const trajectories = res.choices.map((choice) => {
        const r = reward(choice.message.content ?? '');
        total += r;
        count++;
        // The choice goes back exactly as the server returned it: its logprobs carry the sampled token ids.
        return { messages_and_choices: [...messages, choice], reward: r, metrics: { lowercase: r } };
      });
      groups.push({ trajectories, exceptions: [] });
    }
    rewards.push(total / count);
    log(`step ${step}: mean reward ${(total / count).toFixed(3)}`);
    if (step === opts.steps) break;
    const job = await api<{ id: string }>(opts, '/v1/preview/training-jobs', {
      method: 'POST',
      body: JSON.stringify({
        model_id: model.id,
        trajectory_groups: groups,
        experimental_config: { learning_rate: opts.learningRate ?? 2e-3 },
      }),
    });
    await waitForJob(opts, job.id);
  }
  return { modelId: model.id, inferenceName, rewards };
}

function arg(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

if (process.argv[1]?.endsWith('rl-loop.ts')) {
  const baseURL = arg('base-url') ?? process.env.TUNEBOARD_URL ?? 'http://localhost:3000';
  const apiKey = arg('key') ?? process.env.TUNEBOARD_API_KEY;
  if (!apiKey) {
    console.error(
      'usage: npx tsx examples/rl-loop.ts --base-url URL --key API_KEY [--steps N] [--base-model ID] [--project NAME] [--group-size N] [--lr 2e-3] [--seed N]',
    );
    process.exit(2);
  }
  runRlLoop({
    baseURL,
    apiKey,
    steps: Number(arg('steps') ?? 6),
    // Any base model of the server (GET /v1/models), e.g. a Hugging Face model trained by the Python worker.
    baseModel: arg('base-model'),
    project: arg('project'),
    groupSize: arg('group-size') ? Number(arg('group-size')) : undefined,
    learningRate: arg('lr') ? Number(arg('lr')) : undefined,
    seed: arg('seed') ? Number(arg('seed')) : undefined,
  })
    .then((r) => console.log(`rewards by step: ${r.rewards.map((x) => x.toFixed(3)).join(' → ')}`))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
