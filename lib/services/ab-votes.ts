import 'server-only';
import type { z } from 'zod';
import { ApiError } from '@/lib/errors';
import { getDb } from '@/lib/db/client';
import * as abVotesRepo from '@/lib/db/repositories/ab-votes';
import * as modelsRepo from '@/lib/db/repositories/models';
import type { createAbVoteBodySchema } from '@/lib/schemas/ab-votes';
import type { Principal } from './accounts';
import { requireModel } from './models';

/** Records a blind A/B vote between two of the model's checkpoints (both must exist when the vote is cast). */
export async function createAbVote(
  principal: Principal,
  modelId: string,
  body: z.infer<typeof createAbVoteBodySchema>,
): Promise<{ id: string }> {
  const db = await getDb();
  const model = await requireModel(principal, modelId);
  if (body.a_step === body.b_step) {
    throw ApiError.valueError(['body', 'b_step'], 'A and B must be two different checkpoints', body.b_step);
  }
  for (const [field, step] of [
    ['a_step', body.a_step],
    ['b_step', body.b_step],
  ] as const) {
    if (!(await modelsRepo.findCheckpointByStep(db, model.id, step))) {
      throw ApiError.valueError(['body', field], `The model has no checkpoint at step ${step}`, step);
    }
  }
  return abVotesRepo.insertVote(db, {
    modelId: model.id,
    aStep: body.a_step,
    bStep: body.b_step,
    winner: body.winner,
    prompt: body.prompt,
    voterId: principal.userId,
  });
}

/** Which step people prefer, per pair of steps that were compared. */
export async function abVoteSummary(principal: Principal, modelId: string) {
  const model = await requireModel(principal, modelId);
  const rows = await abVotesRepo.voteTallies(await getDb(), model.id);
  return {
    data: rows.map((r) => ({
      low_step: r.low,
      high_step: r.high,
      votes: r.votes,
      low_wins: r.lowWins,
      high_wins: r.highWins,
      ties: r.ties,
      both_bad: r.bothBad,
    })),
  };
}
