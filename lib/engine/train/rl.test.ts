import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { loadBaseModel } from '../base-models';
import { BUILTIN_CHAT_TEMPLATE, ChatTemplate } from '../chat-template';
import { generate } from '../generate';
import { Model } from '../model';
import { choiceGenerator } from '../random';
import { Tokenizer } from '../tokenizer';
import type { RlConfig } from './rl-loss';
import { prepareRlBatch, rowTensors, trainRl, type RlRowData } from './rl';
import { trainSft } from './sft';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const tok = new Tokenizer();
const tpl = new ChatTemplate(BUILTIN_CHAT_TEMPLATE);
const imEnd = tok.specialTokenId('<|im_end|>')!;

const config: RlConfig = {
  loss: 'ppo',
  epsilon: 0.2,
  epsilon_high: 0.2,
  advantage_balance: 0,
  tau: null,
  learning_rate: 3e-4,
  mask_prob_ratio: false,
  max_negative_advantage_importance_sampling_weight: null,
  precalculate_logprobs: false,
  scale_rewards: true,
  importance_sampling_level: 'token',
  allow_training_without_logprobs: false,
};

const choice = (text: string, tokens: Array<string | number> | null, logprob = -0.5) => ({
  finish_reason: 'stop',
  index: 0,
  logprobs: tokens
    ? {
        content: tokens.map((t) => ({
          token: typeof t === 'number' ? `token_id:${t}` : t,
          logprob,
          bytes: [],
          top_logprobs: [],
        })),
      }
    : null,
  message: { role: 'assistant', content: text },
});
const traj = (reward: number, items: unknown[], extra: Record<string, unknown> = {}) => ({
  reward,
  messages_and_choices: items,
  tools: null,
  ...extra,
});

describe('prepareRlBatch (docs/contract.md §5.1, §5.2)', () => {
  it('drops A = 0 trajectories and counts groups and trajectories', () => {
    const hi = choice('hi', [104, 105, imEnd]);
    const groups = [
      {
        trajectories: [traj(1, [{ role: 'user', content: 'x' }, hi]), traj(0, [{ role: 'user', content: 'x' }, hi])],
        exceptions: [{}],
      },
      { trajectories: [traj(1, [hi]), traj(1, [hi])], exceptions: [] },
      { trajectories: [traj(0.5, [hi])], exceptions: [] },
      { trajectories: [], exceptions: [] },
    ];
    const b = prepareRlBatch(groups, tok, config, 256, tpl);
    expect(b.numGroupsSubmitted).toBe(4);
    expect(b.numGroupsTrainable).toBe(1);
    expect(b.numTrajectories).toBe(6);
    expect(b.rows.map((r) => r.label)).toEqual(['group 1, trajectory 1', 'group 1, trajectory 2']);
    expect(b.rows[0].advantage).toBeCloseTo(1, 5);
    expect(b.rows[1].advantage).toBeCloseTo(-1, 5);
  });

  it('uses the Choice token ids and logprobs, masks assistant tokens, leaves the final turn open', () => {
    const b = prepareRlBatch(
      [
        {
          trajectories: [
            traj(1, [{ role: 'user', content: 'q' }, choice('hi', [104, 'i', imEnd], -0.25)]),
            traj(0, [choice('x', [120])]),
          ],
        },
      ],
      tok,
      config,
      256,
      tpl,
    );
    const row = b.rows[0];
    expect(tok.decode(row.ids)).toBe('<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\nhi<|im_end|>');
    expect(row.ids.slice(-3)).toEqual([104, 105, imEnd]);
    expect(row.mask.slice(-4)).toEqual([0, 1, 1, 1]);
    expect(row.oldLogprobs.slice(-3)).toEqual([-0.25, -0.25, -0.25]);
  });

  it('truncates after the last Choice with logprobs; earlier plain assistant turns train with NaN old logprobs', () => {
    const items = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'c' },
      choice('d', [100]),
      { role: 'user', content: 'after' },
      { role: 'assistant', content: 'ignored' },
    ];
    const b = prepareRlBatch([{ trajectories: [traj(1, items), traj(0, items)] }], tok, config, 256, tpl);
    const row = b.rows[0];
    expect(tok.decode(row.ids)).not.toContain('after');
    const trained = row.ids.filter((_, j) => row.mask[j] === 1);
    expect(tok.decode(trained)).toBe('b<|im_end|>d');
    const bIndex = row.ids.indexOf(98);
    expect(Number.isNaN(row.oldLogprobs[bIndex])).toBe(true);
    expect(row.oldLogprobs.at(-1)).toBe(-0.5);
  });

  it('drops histories without a Choice carrying logprobs unless allow_training_without_logprobs', () => {
    const items = [{ role: 'user', content: 'q' }, choice('plain', null)];
    const groups = [{ trajectories: [traj(1, items), traj(0, items)] }];
    expect(prepareRlBatch(groups, tok, config, 256, tpl).rows).toHaveLength(0);
    const allowed = prepareRlBatch(groups, tok, { ...config, allow_training_without_logprobs: true }, 256, tpl);
    expect(allowed.rows).toHaveLength(2);
    expect(rowTensors(allowed.rows, true)).toHaveLength(2);
  });

  it('tokenises additional_histories with the same advantage', () => {
    const extra = {
      additional_histories: [
        { messages_and_choices: [{ role: 'user', content: 'z' }, choice('y', [121])], tools: null },
      ],
    };
    const b = prepareRlBatch(
      [{ trajectories: [traj(2, [choice('a', [97])], extra), traj(0, [choice('b', [98])])] }],
      tok,
      config,
      256,
      tpl,
    );
    expect(b.rows.map((r) => r.label)).toEqual([
      'group 1, trajectory 1',
      'group 1, trajectory 1, additional history 1',
      'group 1, trajectory 2',
    ]);
    expect(b.rows[1].advantage).toBe(b.rows[0].advantage);
  });

  it('fails with the trajectory named when a token is not in the vocabulary', () => {
    const groups = [
      { trajectories: [traj(1, [choice('x', ['token_id:5', '<not a token>'])]), traj(0, [choice('y', [1])])] },
    ];
    expect(() => prepareRlBatch(groups, tok, config, 256, tpl)).toThrow(
      'group 1, trajectory 1: token "<not a token>" is not in the model\'s vocabulary',
    );
  });
});

describe('rowTensors (docs/contract.md §5.2.6, §5.3)', () => {
  const mk = (trajectory: number, advantage: number, masked: number): RlRowData => ({
    label: `t${trajectory}`,
    trajectory,
    ids: Array.from({ length: masked + 2 }, (_, j) => j),
    mask: [0, 0, ...Array.from({ length: masked }, () => 1)],
    oldLogprobs: Array.from({ length: masked + 2 }, () => -1),
    advantage,
  });

  it('weights 1/N per trajectory, then w/mean(w) and A/mean(|A|·w) over masked tokens', () => {
    // Hand values: w = [1/2, 1/4] → mean over 6 tokens 1/3 → [1.5, 0.75]; mean(|A|·w) = 0.5 → A = ±1.
    const t = rowTensors([mk(0, 0.5, 2), mk(1, -0.5, 4)], false);
    expect(t[0].weights[1]).toBeCloseTo(1.5, 5);
    expect(t[1].weights[1]).toBeCloseTo(0.75, 5);
    expect(t[0].advantages[1]).toBeCloseTo(1, 5);
    expect(t[1].advantages[1]).toBeCloseTo(-1, 5);
    expect(t[0].mask[0]).toBe(0);
    // Positions are shifted by one: position p predicts token p+1.
    expect([...t[0].mask]).toEqual([0, 1, 1]);
  });

  it('is empty when no masked token has a sampler logprob', () => {
    const row = mk(0, 1, 2);
    row.oldLogprobs = row.oldLogprobs.map(() => NaN);
    expect(rowTensors([row], false)).toEqual([]);
  });
});

describe('trainRl', () => {
  it('does nothing when nothing is trainable: no step, weights unchanged', async () => {
    const { model } = loadBaseModel('tuneboard/tiny-random', null);
    const before = model.getTensor('model.norm.weight');
    let started = -1;
    const r = await trainRl(
      model,
      tok,
      [{ trajectories: [traj(1, [choice('a', [97])]), traj(1, [choice('b', [98])])] }],
      {
        config,
        onStart: (n) => void (started = n),
      },
    );
    expect(started).toBe(0);
    expect(r.steps).toEqual([]);
    expect(r.numGroupsTrainable).toBe(0);
    expect(model.getTensor('model.norm.weight')).toEqual(before);
    model.release();
  });

  it('emits one step per history with the docs/contract.md §3.5 keys, and precalculate_logprobs replaces old logprobs', async () => {
    const model = Model.create(
      { ...loadBaseModel('tuneboard/tiny-random', null).spec.config, n_layers: 1 },
      { seed: 2 },
    );
    const groups = [
      {
        trajectories: [
          traj(1, [{ role: 'user', content: 'q' }, choice('a', [97], -9)]),
          traj(0, [choice('b', [98], -9)]),
        ],
      },
    ];
    const plain = await trainRl(model, tok, groups, { config: { ...config, learning_rate: 1e-3 } });
    expect(plain.steps).toHaveLength(2);
    for (const s of plain.steps) {
      expect(Object.keys(s).sort()).toEqual(
        [
          'entropy',
          'grad_norm',
          'learning_rate',
          'loss',
          'num_groups_submitted',
          'num_groups_trainable',
          'num_trainable_tokens',
          'num_trajectories',
          'policy_loss',
          'zero_advantage_share',
        ].sort(),
      );
      expect(Object.values(s).every(Number.isFinite)).toBe(true);
      expect(s.num_trainable_tokens).toBe(1);
    }
    // Old logprobs of −9 make the ratio huge, so PPO clips and the loss is −(1 + ε)·A·w; recomputed old
    // logprobs give ratio 1 on the first step instead.
    const pre = await trainRl(model, tok, groups, { config: { ...config, precalculate_logprobs: true } });
    const positive = (steps: typeof plain.steps) => steps.find((s) => s.loss < 0)!;
    expect(positive(plain.steps).loss).toBeLessThan(positive(pre.steps).loss - 0.05);
    model.release();
  });

  it('raises the mean reward of "answer with the digit 7" on held-out prompts', async () => {
    const { model, tokenizer } = loadBaseModel('tuneboard/tiny-random', null);
    const train = ['digit?', 'a digit', 'pick one', 'number?'];
    const heldOut = ['digit!', 'one digit', 'pick'];
    // Warm-up: SFT to answer any digit, so that 7 is sampled sometimes and groups have reward spread.
    const digits = train.flatMap((q) =>
      [...'0123456789'].map((d) => ({
        line: 1,
        messages: [
          { role: 'user', content: q },
          { role: 'assistant', content: d },
        ],
      })),
    );
    await trainSft(model, tokenizer, Array.from({ length: 10 }, () => digits).flat(), {
      batchSize: 10,
      learningRate: 3e-3,
      assistantTurns: 'all',
    });
    const sample = async (prompts: string[], n: number, seed: number) => {
      const reqs = prompts.flatMap((q, pi) =>
        Array.from({ length: n }, (_, i) => ({
          q,
          req: {
            promptTokenIds: tokenizer.encode(tpl.render([{ role: 'user', content: q }], { addGenerationPrompt: true })),
            maxTokens: 3,
            eosTokenId: imEnd,
            sampling: { temperature: 1 },
            generator: choiceGenerator(seed + pi * 1000, i),
          },
        })),
      );
      const res = await generate(
        model,
        tokenizer,
        reqs.map((r) => r.req),
      );
      return res.map((r, i) => ({ q: reqs[i].q, r, reward: r.text === '7' ? 1 : 0 }));
    };
    const meanReward = (xs: Array<{ reward: number }>) => xs.reduce((a, x) => a + x.reward, 0) / xs.length;
    const before = meanReward(await sample(heldOut, 32, 99));
    for (let it = 0; it < 4; it++) {
      const s = await sample(train, 8, it * 7);
      const groups = train.map((q) => ({
        exceptions: [],
        trajectories: s
          .filter((x) => x.q === q)
          .map((x) =>
            traj(x.reward, [
              { role: 'user', content: q },
              {
                finish_reason: 'stop',
                index: 0,
                logprobs: { content: x.r.tokens.map((t) => ({ token: `token_id:${t.tokenId}`, logprob: t.logprob })) },
                message: { role: 'assistant', content: x.r.text },
              },
            ]),
          ),
      }));
      await trainRl(model, tokenizer, groups, { config });
    }
    const after = meanReward(await sample(heldOut, 32, 99));
    expect(before).toBeLessThan(0.3);
    expect(after).toBeGreaterThan(before + 0.3);
    model.release();
  });
});
