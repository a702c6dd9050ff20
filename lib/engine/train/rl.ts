import {
  BUILTIN_CHAT_TEMPLATE,
  ChatTemplate,
  contentText,
  tokenizeConversation,
  type ChatMessage,
  type TurnTokens,
} from '../chat-template';
import type { Model } from '../model';
import { Generator } from '../random';
import type { Tokenizer } from '../tokenizer';
import { AdamW } from './adamw';
import { accumulateGradients, scoreSequences, yieldToEventLoop } from './micro-batches';
import { balanceAdvantage, groupAdvantages, rlRowLoss, type RlConfig } from './rl-loss';
import { Trainer } from './trainer';

/**
 * RL training on stored trajectory groups, exactly docs/contract.md §5: advantages per group (§5.1),
 * histories tokenised with the chat template and truncated after their last trainable assistant item (docs/contract.md §5.2),
 * batch-wide weight and advantage normalisation (docs/contract.md §5.3), the PPO/CISPO objective (§5.4, rl-loss.ts),
 * optional precalculated old logprobs (docs/contract.md §5.5), AdamW β 0.9/0.99, weight decay 0.1, clip 0.1, constant
 * learning rate (docs/contract.md §5.6). Without packing, each history is one row and one optimizer step (§5.3 [DEC]).
 */

export class RlDataError extends Error {}

export interface RlRowData {
  /** "group 1, trajectory 2" (1-based), for messages. */
  label: string;
  trajectory: number;
  ids: number[];
  /** Per token (index j): 1 if token j is trained. */
  mask: number[];
  /** Per token: sampler logprob, NaN when unknown. */
  oldLogprobs: number[];
  advantage: number;
}

export interface PreparedRlBatch {
  rows: RlRowData[];
  numGroupsSubmitted: number;
  numGroupsTrainable: number;
  numTrajectories: number;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** docs/contract.md §4.3: an item with a `message` key is a Choice; anything else is a message dict. */
function isChoice(item: Json): boolean {
  return 'message' in item;
}

function choiceMessage(item: Json): ChatMessage {
  const m = isObject(item.message) ? item.message : {};
  const toolCalls = Array.isArray(m.tool_calls) && m.tool_calls.length > 0 ? m.tool_calls : undefined;
  return { role: 'assistant', content: contentText(m.content), ...(toolCalls ? { tool_calls: toolCalls } : {}) };
}

function hasLogprobs(item: Json): boolean {
  return isChoice(item) && item.logprobs !== null && item.logprobs !== undefined;
}

function isAssistant(item: Json): boolean {
  return isChoice(item) || item.role === 'assistant';
}

/** Reverse vocabulary for docs/contract.md §4.4's fallback: a token string that is not `token_id:N`. */
function tokenLookup(tokenizer: Tokenizer): Map<string, number> {
  const map = new Map<string, number>();
  for (let id = tokenizer.vocabSize - 1; id >= 0; id--) map.set(tokenizer.tokenText(id), id);
  return map;
}

/**
 * Tokenises every history of every trajectory with its advantage. Rewards, advantages and group counts
 * follow docs/contract.md §5.1; histories follow §5.2; rows longer than the context keep their first `ctx` tokens.
 */
export function prepareRlBatch(
  groups: readonly unknown[],
  tokenizer: Tokenizer,
  config: Pick<RlConfig, 'scale_rewards' | 'allow_training_without_logprobs' | 'advantage_balance'>,
  ctx: number,
  template: ChatTemplate = new ChatTemplate(BUILTIN_CHAT_TEMPLATE),
): PreparedRlBatch {
  let lookup: Map<string, number> | null = null;
  const rows: RlRowData[] = [];
  let numGroupsTrainable = 0;
  let numTrajectories = 0;
  let trajectoryId = 0;
  groups.forEach((g, gi) => {
    const group = isObject(g) ? g : {};
    const trajectories = (Array.isArray(group.trajectories) ? group.trajectories : []).filter(isObject);
    const exceptions = Array.isArray(group.exceptions) ? group.exceptions.length : 0;
    numTrajectories += trajectories.length + exceptions;
    if (trajectories.length === 0) return;
    const rewards = trajectories.map((t) => (typeof t.reward === 'number' ? t.reward : 0));
    if (trajectories.length >= 2 && new Set(rewards).size > 1) numGroupsTrainable++;
    const advantages = groupAdvantages(rewards, config.scale_rewards);
    trajectories.forEach((traj, ti) => {
      const id = trajectoryId++;
      // docs/contract.md §5.1: a trajectory with A = 0 is dropped entirely.
      if (advantages[ti] === 0) return;
      const advantage = balanceAdvantage(advantages[ti], config.advantage_balance);
      const label = `group ${gi + 1}, trajectory ${ti + 1}`;
      const histories: Array<{ items: unknown; tools: unknown }> = [
        { items: traj.messages_and_choices, tools: traj.tools },
        ...(Array.isArray(traj.additional_histories) ? traj.additional_histories.filter(isObject) : []).map((h) => ({
          items: h.messages_and_choices,
          tools: h.tools,
        })),
      ];
      histories.forEach((history, hi) => {
        const items = (Array.isArray(history.items) ? history.items : []).filter(isObject);
        const historyLabel = hi === 0 ? label : `${label}, additional history ${hi}`;
        // docs/contract.md §5.2.2: truncate after the last trainable assistant item; no such item, no row.
        let last = -1;
        items.forEach((item, i) => {
          if (hasLogprobs(item) || (config.allow_training_without_logprobs && isAssistant(item))) last = i;
        });
        if (last < 0) return;
        const kept = items.slice(0, last + 1);
        const messages: ChatMessage[] = [];
        const turnTokens = new Map<number, TurnTokens>();
        kept.forEach((item, i) => {
          if (!isChoice(item)) {
            messages.push({ ...item, role: typeof item.role === 'string' ? item.role : 'user' });
            return;
          }
          messages.push(choiceMessage(item));
          const content =
            isObject(item.logprobs) && Array.isArray(item.logprobs.content) ? item.logprobs.content : null;
          if (!content || content.length === 0) return;
          const ids: number[] = [];
          const lps: number[] = [];
          for (const entry of content) {
            const e = isObject(entry) ? entry : {};
            const token = typeof e.token === 'string' ? e.token : '';
            // docs/contract.md §4.4: `token_id:N`, else the token string looked up in the vocabulary, else a precise failure.
            const m = /^token_id:(\d+)$/.exec(token);
            let tokenId = m ? Number(m[1]) : undefined;
            if (tokenId === undefined) {
              lookup ??= tokenLookup(tokenizer);
              tokenId = lookup.get(token);
            }
            if (tokenId === undefined || tokenId >= tokenizer.vocabSize) {
              throw new RlDataError(`${historyLabel}: token ${JSON.stringify(token)} is not in the model's vocabulary`);
            }
            ids.push(tokenId);
            lps.push(typeof e.logprob === 'number' ? e.logprob : NaN);
          }
          turnTokens.set(i, { ids, logprobs: lps });
        });
        let conv;
        try {
          conv = tokenizeConversation(tokenizer, template, messages, {
            tools: Array.isArray(history.tools) ? history.tools : null,
            assistantTurns: 'all',
            continueFinal: true,
            turnTokens,
          });
        } catch (err) {
          throw new RlDataError(`${historyLabel}: ${(err as Error).message}`);
        }
        const n = Math.min(conv.ids.length, ctx);
        rows.push({
          label: historyLabel,
          trajectory: id,
          ids: conv.ids.slice(0, n),
          mask: conv.mask.slice(0, n),
          oldLogprobs: conv.logprobs.slice(0, n),
          advantage,
        });
      });
    });
  });
  return {
    rows: rows.filter((r) => r.ids.length >= 2),
    numGroupsSubmitted: groups.length,
    numGroupsTrainable,
    numTrajectories,
  };
}

export interface RlStepMetrics {
  loss: number;
  policy_loss: number;
  entropy: number;
  grad_norm: number;
  learning_rate: number;
  num_trainable_tokens: number;
  num_groups_submitted: number;
  num_groups_trainable: number;
  /** Share of submitted groups without a reward spread (every advantage 0): 1 means this job cannot move the weights. */
  zero_advantage_share: number;
  num_trajectories: number;
}

/** Groups without a reward spread over groups submitted; 0 for an empty job (nothing was asked of it). */
export function zeroAdvantageShare(submitted: number, trainable: number): number {
  return submitted > 0 ? (submitted - trainable) / submitted : 0;
}

export interface RlRowTensors {
  row: RlRowData;
  /** Per logprob position t (target token t+1). */
  mask: Float64Array;
  oldLogprobs: Float64Array;
  weights: Float64Array;
  advantages: Float64Array;
}

/**
 * docs/contract.md §5.2.6 and §5.3: w_i = 1/(N_i + 1e-6) per trajectory (N_i its masked tokens over all its histories); then
 * over all masked tokens of the batch w ← w / mean(w) and A ← A / mean(|A|·w). Returns position-indexed
 * arrays ready for rlRowLoss, or an empty list when no masked token is trainable (docs/contract.md §5.2.5).
 */
export function rowTensors(rows: readonly RlRowData[], allowWithoutLogprobs: boolean): RlRowTensors[] {
  const perTrajectory = new Map<number, number>();
  let anyLogprob = false;
  for (const r of rows) {
    let n = 0;
    for (let j = 1; j < r.ids.length; j++) {
      if (r.mask[j] !== 1) continue;
      n++;
      if (!Number.isNaN(r.oldLogprobs[j])) anyLogprob = true;
    }
    perTrajectory.set(r.trajectory, (perTrajectory.get(r.trajectory) ?? 0) + n);
  }
  if (!anyLogprob && !allowWithoutLogprobs) return [];
  const out: RlRowTensors[] = [];
  let wSum = 0;
  let count = 0;
  for (const row of rows) {
    const n = row.ids.length - 1;
    const t: RlRowTensors = {
      row,
      mask: new Float64Array(n),
      oldLogprobs: new Float64Array(n),
      weights: new Float64Array(n),
      advantages: new Float64Array(n),
    };
    const w = 1 / ((perTrajectory.get(row.trajectory) ?? 0) + 1e-6);
    for (let p = 0; p < n; p++) {
      t.oldLogprobs[p] = row.oldLogprobs[p + 1];
      if (row.mask[p + 1] !== 1) continue;
      t.mask[p] = 1;
      t.weights[p] = w;
      t.advantages[p] = row.advantage;
      wSum += w;
      count++;
    }
    if (t.mask.some((m) => m === 1)) out.push(t);
  }
  if (count === 0) return [];
  const wMean = wSum / count;
  let aw = 0;
  for (const t of out) {
    for (let p = 0; p < t.mask.length; p++) {
      if (t.mask[p] !== 1) continue;
      t.weights[p] /= wMean;
      aw += Math.abs(t.advantages[p]) * t.weights[p];
    }
  }
  const aMean = aw / count;
  for (const t of out) for (let p = 0; p < t.mask.length; p++) if (t.mask[p] === 1) t.advantages[p] /= aMean;
  return out;
}

export interface RlOptions {
  config: RlConfig;
  template?: ChatTemplate;
  signal?: AbortSignal;
  /** Called once the number of optimizer steps is known, before the first step. */
  onStart?: (numSteps: number) => Promise<void> | void;
  onStep?: (metrics: RlStepMetrics, index: number) => Promise<void> | void;
  /** Row order seed (docs/contract.md §5.3: rows are shuffled); fixed so a job is reproducible. */
  shuffleSeed?: number;
}

export interface RlResult {
  steps: RlStepMetrics[];
  numGroupsSubmitted: number;
  numGroupsTrainable: number;
  numTrajectories: number;
}

/** Trains `model` in place on trajectory groups. Nothing trainable → no step, weights untouched (docs/contract.md §2.7). */
export async function trainRl(
  model: Model,
  tokenizer: Tokenizer,
  groups: readonly unknown[],
  options: RlOptions,
): Promise<RlResult> {
  const cfg = options.config;
  const batch = prepareRlBatch(groups, tokenizer, cfg, model.config.ctx, options.template);
  const tensors = rowTensors(batch.rows, cfg.allow_training_without_logprobs);
  const rng = new Generator(options.shuffleSeed ?? 0);
  for (let i = tensors.length - 1; i > 0; i--) {
    const j = Math.floor(rng.random() * (i + 1));
    [tensors[i], tensors[j]] = [tensors[j], tensors[i]];
  }
  const result: RlResult = {
    steps: [],
    numGroupsSubmitted: batch.numGroupsSubmitted,
    numGroupsTrainable: batch.numGroupsTrainable,
    numTrajectories: batch.numTrajectories,
  };
  await options.onStart?.(tensors.length);
  if (tensors.length === 0) return result;

  const trainer = new Trainer(model);
  const optimizer = new AdamW(trainer, { beta1: 0.9, beta2: 0.99, weightDecay: 0.1, maxGradNorm: 0.1 });
  try {
    if (cfg.precalculate_logprobs) {
      // docs/contract.md §5.5: lp_old from the not-yet-updated policy, once per job, for every row.
      const scores = scoreSequences(
        trainer,
        tensors.map((t) => t.row.ids),
      );
      tensors.forEach((t, i) => t.oldLogprobs.set(scores[i].logprobs));
    }
    for (let s = 0; s < tensors.length; s++) {
      options.signal?.throwIfAborted();
      const t = tensors[s];
      let loss = 0;
      let entropy = 0;
      let masked = 0;
      trainer.zeroGrad();
      accumulateGradients(trainer, [{ ids: t.row.ids }], (_item, scores) => {
        const out = rlRowLoss(scores.logprobs, t, cfg);
        loss = out.loss;
        masked = out.maskedTokens;
        let h = 0;
        for (let p = 0; p < t.mask.length; p++) if (t.mask[p] === 1) h += scores.entropy[p] * t.weights[p];
        entropy = masked > 0 ? h / masked : 0;
        return Float32Array.from(out.grad);
      });
      const gradNorm = optimizer.step(cfg.learning_rate);
      const metrics: RlStepMetrics = {
        loss,
        policy_loss: loss,
        entropy,
        grad_norm: gradNorm,
        learning_rate: cfg.learning_rate,
        num_trainable_tokens: masked,
        num_groups_submitted: batch.numGroupsSubmitted,
        num_groups_trainable: batch.numGroupsTrainable,
        zero_advantage_share: zeroAdvantageShare(batch.numGroupsSubmitted, batch.numGroupsTrainable),
        num_trajectories: batch.numTrajectories,
      };
      result.steps.push(metrics);
      await options.onStep?.(metrics, s);
      await yieldToEventLoop();
    }
    return result;
  } finally {
    optimizer.release();
    trainer.release();
  }
}
