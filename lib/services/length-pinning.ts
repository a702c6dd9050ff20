import 'server-only';
import { getDb } from '@/lib/db/client';
import * as logSumsRepo from '@/lib/db/repositories/log-metric-sums';
import type { CompletionCounts } from '@/lib/body/prepared';
import type { LengthPinningDto } from '@/lib/schemas/trajectories';
import { sumsFromJson } from './trajectory-metrics';

/**
 * Length pinning, judged from the completions the server holds (every /log call's and RL job's trajectories, pooled
 * per step and split), not from a metric the user happened to name completion_tokens: a policy that learned to fill
 * max_tokens (reward 0.32 → 1.0 by answering at length) shows as completions that stop with finish_reason "length",
 * and as token counts that climb to the longest one seen and stay there.
 *
 * Per split, over the steps with completions (at least three): pinned when, in the latest third of those steps,
 * at least half the completions stopped at the limit while the first third had at most half that share and at least
 * 30 points less; or, where the choices carry logprobs (their token counts), when the latest third's mean length is
 * within 5 % of the longest completion seen and the first third's was under 80 % of it.
 */
export function detectLengthPinning(
  rows: readonly { step: number; split: string; completions: CompletionCounts | undefined }[],
): LengthPinningDto[] {
  const bySplit = new Map<string, { step: number; c: CompletionCounts }[]>();
  for (const r of rows) {
    if (!r.completions || r.completions.n === 0) continue;
    const list = bySplit.get(r.split) ?? [];
    list.push({ step: r.step, c: r.completions });
    bySplit.set(r.split, list);
  }
  const out: LengthPinningDto[] = [];
  for (const [split, steps] of bySplit) {
    if (steps.length < 3) continue;
    steps.sort((a, b) => a.step - b.step);
    const k = Math.max(1, Math.floor(steps.length / 3));
    const first = steps.slice(0, k);
    const recent = steps.slice(-k);
    const share = (xs: typeof steps) => {
      const n = xs.reduce((a, x) => a + x.c.n, 0);
      return n === 0 ? 0 : xs.reduce((a, x) => a + x.c.length, 0) / n;
    };
    const meanTokens = (xs: typeof steps) => {
      const n = xs.reduce((a, x) => a + x.c.tokenN, 0);
      return n === 0 ? null : xs.reduce((a, x) => a + x.c.tokenSum, 0) / n;
    };
    const tokenMax = Math.max(...steps.map((x) => x.c.tokenMax));
    const shareFrom = share(first);
    const shareTo = share(recent);
    const tokensFrom = meanTokens(first);
    const tokensTo = meanTokens(recent);
    const byShare = shareTo >= 0.5 && shareFrom <= shareTo / 2 && shareTo - shareFrom >= 0.3;
    const byTokens =
      tokensFrom !== null &&
      tokensTo !== null &&
      tokenMax > 0 &&
      tokensTo >= 0.95 * tokenMax &&
      tokensFrom < 0.8 * tokenMax;
    if (!byShare && !byTokens) continue;
    out.push({
      split,
      steps: [first[0].step, recent[recent.length - 1].step],
      length_share_from: shareFrom,
      length_share_to: shareTo,
      tokens_from: tokensFrom,
      tokens_to: tokensTo,
      token_max: tokenMax > 0 ? tokenMax : null,
    });
  }
  return out;
}

/** The model's length-pinning signals, from its pooled /log and RL job sums (one small row per step and split). */
export async function lengthPinningOf(modelId: string): Promise<LengthPinningDto[]> {
  const db = await getDb();
  const rows = await logSumsRepo.listLogMetricSums(db, modelId);
  return detectLengthPinning(
    rows.map((r) => ({ step: r.step, split: r.split, completions: sumsFromJson(r.sums).completions })),
  );
}
