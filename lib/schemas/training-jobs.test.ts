import { describe, expect, it } from 'vitest';
import {
  createSftJobBodySchema,
  resolveRlConfig,
  resolveSftConfig,
  rlExperimentalConfigSchema,
  RL_DEFAULT_LEARNING_RATE,
  SFT_DEFAULT_BATCH_SIZE,
  SFT_DEFAULT_LEARNING_RATE,
  validationCount,
} from './training-jobs';

describe('resolveRlConfig (docs/contract.md §3.1, §5.7)', () => {
  it('resolves null, undefined and {} to the documented defaults: PPO with ε = ε_high = 0.2', () => {
    const expected = {
      loss: 'ppo',
      epsilon: 0.2,
      epsilon_high: 0.2,
      advantage_balance: 0,
      tau: null,
      learning_rate: RL_DEFAULT_LEARNING_RATE,
      mask_prob_ratio: false,
      max_negative_advantage_importance_sampling_weight: null,
      precalculate_logprobs: false,
      scale_rewards: true,
      importance_sampling_level: 'token',
      allow_training_without_logprobs: false,
    };
    expect(resolveRlConfig(null)).toEqual(expected);
    expect(resolveRlConfig(undefined)).toEqual(expected);
    expect(resolveRlConfig({})).toEqual(expected);
    expect(RL_DEFAULT_LEARNING_RATE).toBe(5e-6);
  });

  it('ppo null → PPO 0.2/0.2; ppo true → PPO; ppo false → CISPO 1.0/4.0', () => {
    expect(resolveRlConfig({ ppo: null })).toMatchObject({ loss: 'ppo', epsilon: 0.2, epsilon_high: 0.2 });
    expect(resolveRlConfig({ ppo: true })).toMatchObject({ loss: 'ppo', epsilon: 0.2, epsilon_high: 0.2 });
    expect(resolveRlConfig({ ppo: false })).toMatchObject({ loss: 'cispo', epsilon: 1.0, epsilon_high: 4.0 });
  });

  it('ε_high follows an explicit ε under PPO, but not under CISPO; explicit values win', () => {
    expect(resolveRlConfig({ epsilon: 0.3 })).toMatchObject({ epsilon: 0.3, epsilon_high: 0.3 });
    expect(resolveRlConfig({ epsilon: 0.3, epsilon_high: 0.28 })).toMatchObject({ epsilon: 0.3, epsilon_high: 0.28 });
    expect(resolveRlConfig({ ppo: false, epsilon: 0.5 })).toMatchObject({ epsilon: 0.5, epsilon_high: 4.0 });
    expect(resolveRlConfig({ ppo: false, epsilon_high: 2 })).toMatchObject({ epsilon: 1.0, epsilon_high: 2 });
    expect(resolveRlConfig({ epsilon: 0 })).toMatchObject({ epsilon: 0, epsilon_high: 0 });
  });

  it('honours loss_fn only when ppo is null', () => {
    expect(resolveRlConfig({ loss_fn: 'cispo' })).toMatchObject({ loss: 'cispo', epsilon: 1.0, epsilon_high: 4.0 });
    expect(resolveRlConfig({ ppo: null, loss_fn: 'cispo' }).loss).toBe('cispo');
    expect(resolveRlConfig({ loss_fn: 'ppo' }).loss).toBe('ppo');
    expect(resolveRlConfig({ ppo: true, loss_fn: 'cispo' }).loss).toBe('ppo');
    expect(resolveRlConfig({ ppo: false, loss_fn: 'ppo' }).loss).toBe('cispo');
    expect(resolveRlConfig({ loss_fn: 'something-else' }).loss).toBe('ppo');
  });

  it('accepts both τ spellings, kimi_k2_tau winning, and treats 0 as off', () => {
    expect(resolveRlConfig({ alt_k2_tau: 0.5 }).tau).toBe(0.5);
    expect(resolveRlConfig({ kimi_k2_tau: 0.25 }).tau).toBe(0.25);
    expect(resolveRlConfig({ kimi_k2_tau: 0.25, alt_k2_tau: 0.5 }).tau).toBe(0.25);
    expect(resolveRlConfig({ kimi_k2_tau: null, alt_k2_tau: 0.5 }).tau).toBe(0.5);
    expect(resolveRlConfig({ kimi_k2_tau: 0 }).tau).toBeNull();
    expect(resolveRlConfig({ alt_k2_tau: 0 }).tau).toBeNull();
    // Both set: kimi_k2_tau wins even when it says "off".
    expect(resolveRlConfig({ kimi_k2_tau: 0, alt_k2_tau: 0.5 }).tau).toBeNull();
  });

  it('treats a 0 importance-weight cap as off', () => {
    expect(resolveRlConfig({ max_negative_advantage_importance_sampling_weight: 0 })).toMatchObject({
      max_negative_advantage_importance_sampling_weight: null,
    });
    expect(resolveRlConfig({ max_negative_advantage_importance_sampling_weight: 3 })).toMatchObject({
      max_negative_advantage_importance_sampling_weight: 3,
    });
  });

  it('uses normalize_advantages as an alias of scale_rewards when scale_rewards is null', () => {
    expect(resolveRlConfig({ normalize_advantages: false }).scale_rewards).toBe(false);
    expect(resolveRlConfig({ scale_rewards: null, normalize_advantages: false }).scale_rewards).toBe(false);
    expect(resolveRlConfig({ scale_rewards: true, normalize_advantages: false }).scale_rewards).toBe(true);
    expect(resolveRlConfig({ scale_rewards: false, normalize_advantages: true }).scale_rewards).toBe(false);
  });

  it('keeps known importance_sampling_level values and treats anything else as token', () => {
    for (const level of ['token', 'sequence', 'average', 'geometric_average'] as const) {
      expect(resolveRlConfig({ importance_sampling_level: level }).importance_sampling_level).toBe(level);
    }
    for (const level of ['TOKEN', 'seq', '', null, undefined]) {
      expect(resolveRlConfig({ importance_sampling_level: level }).importance_sampling_level).toBe('token');
    }
  });

  it('passes the remaining switches through', () => {
    expect(
      resolveRlConfig({
        advantage_balance: -0.5,
        learning_rate: 1e-5,
        mask_prob_ratio: true,
        precalculate_logprobs: true,
        allow_training_without_logprobs: true,
      }),
    ).toMatchObject({
      advantage_balance: -0.5,
      learning_rate: 1e-5,
      mask_prob_ratio: true,
      precalculate_logprobs: true,
      allow_training_without_logprobs: true,
    });
  });
});

describe('rlExperimentalConfigSchema', () => {
  it('keeps unknown keys out of the way and rejects out-of-range values as custom (value_error) issues', () => {
    const ok = rlExperimentalConfigSchema.safeParse({ learning_rate: 5e-6, plot_tensors: 'yes', kl_penalty_coef: 0.1 });
    expect(ok.success).toBe(true);
    const bad = rlExperimentalConfigSchema.safeParse({ advantage_balance: 1.01, learning_rate: 0, epsilon: -1 });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues.map((i) => [i.path.join('.'), i.code])).toEqual([
      ['advantage_balance', 'custom'],
      ['epsilon', 'custom'],
      ['learning_rate', 'custom'],
    ]);
  });

  it('bounds learning_rate at MAX_LEARNING_RATE, as SFT does', () => {
    const huge = rlExperimentalConfigSchema.safeParse({ learning_rate: 1e308 });
    expect(huge.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['learning_rate', 'learning_rate must be greater than 0 and at most 1'],
    ]);
    expect(rlExperimentalConfigSchema.safeParse({ learning_rate: 1 }).success).toBe(true);
  });
});

describe('resolveSftConfig (docs/contract.md §3.2)', () => {
  const body = { model_id: '00000000-0000-0000-0000-000000000000', training_data_url: 'wandb-artifact:///e/p/n:v0' };

  it('defaults batch_size to 2 and learning_rate to 5e-5', () => {
    expect(SFT_DEFAULT_BATCH_SIZE).toBe(2);
    expect(SFT_DEFAULT_LEARNING_RATE).toBe(5e-5);
    const expected = {
      batch_size: 2,
      learning_rate: 5e-5,
      assistant_turns: 'all',
      epochs: 1,
      validation_split: 0,
      start_from: 'latest',
    };
    expect(resolveSftConfig(body)).toEqual(expected);
    expect(resolveSftConfig({ ...body, config: null })).toEqual(expected);
    expect(resolveSftConfig({ ...body, config: { batch_size: 'auto', learning_rate: null } })).toEqual(expected);
  });

  it('validation_split: a share in (0, 0.5]; the held-out count is at least one and never every example', () => {
    const parse = (validation_split: unknown) =>
      createSftJobBodySchema.safeParse({ ...body, config: { validation_split } }).success;
    expect([0.1, 0.5, null].map(parse)).toEqual([true, true, true]);
    expect([0, -0.1, 0.51, 1, '0.1'].map(parse)).toEqual([false, false, false, false, false]);
    expect(validationCount(20, 0.1)).toBe(2);
    expect(validationCount(10, 0.01)).toBe(1);
    expect(validationCount(2, 0.5)).toBe(1);
    expect(validationCount(1, 0.5)).toBe(0);
    expect(validationCount(20, 0)).toBe(0);
  });

  it("start_from: 'latest', 'base' or a step; anything else is refused", () => {
    const parse = (start_from: unknown) =>
      createSftJobBodySchema.safeParse({ ...body, config: { start_from } }).success;
    expect(['latest', 'base', 0, 12, null].map(parse)).toEqual([true, true, true, true, true]);
    expect(['first', -1, 1.5, '3'].map(parse)).toEqual([false, false, false, false]);
    expect(resolveSftConfig({ ...body, config: { start_from: 3 } }).start_from).toBe(3);
  });

  it('keeps explicit values, learning-rate lists, and assistant_turns from config or the top level', () => {
    expect(resolveSftConfig({ ...body, config: { batch_size: 8, learning_rate: [1e-5, 2e-5] } })).toMatchObject({
      batch_size: 8,
      learning_rate: [1e-5, 2e-5],
    });
    expect(resolveSftConfig({ ...body, assistant_turns: 'last' }).assistant_turns).toBe('last');
    expect(
      resolveSftConfig({ ...body, config: { assistant_turns: 'all' }, assistant_turns: 'last' }).assistant_turns,
    ).toBe('all');
  });
});
