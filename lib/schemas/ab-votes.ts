import { z } from 'zod';
import { idSchema } from './common';

export const AB_WINNERS = ['a', 'b', 'tie', 'both_bad'] as const;
export type AbWinner = (typeof AB_WINNERS)[number];

export const createAbVoteBodySchema = z.object({
  a_step: z.int().min(0).describe('The checkpoint step whose answer was shown as A'),
  b_step: z.int().min(0).describe('The checkpoint step whose answer was shown as B'),
  winner: z.enum(AB_WINNERS).describe('a, b, tie (equally good) or both_bad'),
  prompt: z.string().min(1).max(20_000).describe('The message both answered'),
});

export const abVoteCreatedSchema = z.object({ id: idSchema });

export const abVoteTallySchema = z.object({
  low_step: z.int(),
  high_step: z.int(),
  votes: z.int(),
  low_wins: z.int().describe('Votes for the lower step, whichever side it was shown on'),
  high_wins: z.int(),
  ties: z.int(),
  both_bad: z.int(),
});
export type AbVoteTally = z.infer<typeof abVoteTallySchema>;

export const abVoteSummarySchema = z.object({
  data: z.array(abVoteTallySchema).describe('One row per pair of steps, most-voted first (at most 100)'),
});
