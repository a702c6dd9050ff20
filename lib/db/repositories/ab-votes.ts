import 'server-only';
import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client';
import { abVotes } from '../schema';

export async function insertVote(
  db: DbOrTx,
  vote: {
    modelId: string;
    aStep: number;
    bStep: number;
    winner: 'a' | 'b' | 'tie' | 'both_bad';
    prompt: string;
    voterId: string;
  },
) {
  const [row] = await db.insert(abVotes).values(vote).returning({ id: abVotes.id });
  return row;
}

/**
 * Votes per pair of steps, whichever was shown as A: `low`/`high` are the pair's steps in order, and the wins are
 * counted for the step that won, not the side it was on. Most-voted pairs first.
 */
export async function voteTallies(db: DbOrTx, modelId: string) {
  const low = sql<number>`least(${abVotes.aStep}, ${abVotes.bStep})`;
  const high = sql<number>`greatest(${abVotes.aStep}, ${abVotes.bStep})`;
  const winnerStep = sql`case ${abVotes.winner} when 'a' then ${abVotes.aStep} when 'b' then ${abVotes.bStep} end`;
  const rows = await db
    .select({
      low: low.mapWith(Number),
      high: high.mapWith(Number),
      votes: sql<number>`count(*)`.mapWith(Number),
      lowWins: sql<number>`count(*) filter (where ${winnerStep} = ${low})`.mapWith(Number),
      highWins: sql<number>`count(*) filter (where ${winnerStep} = ${high})`.mapWith(Number),
      ties: sql<number>`count(*) filter (where ${abVotes.winner} = 'tie')`.mapWith(Number),
      bothBad: sql<number>`count(*) filter (where ${abVotes.winner} = 'both_bad')`.mapWith(Number),
      lastAt: sql<string>`max(${abVotes.createdAt})`,
    })
    .from(abVotes)
    .where(eq(abVotes.modelId, modelId))
    .groupBy(low, high)
    .orderBy(sql`count(*) desc`, sql`max(${abVotes.createdAt}) desc`)
    .limit(100);
  return rows;
}
