'use client';

import { useAbVote } from '@/lib/client/queries/mutations';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { type AbWinner } from '@/lib/schemas/ab-votes';

export interface BlindPair {
  modelId: string;
  /** The checkpoint steps shown as A and as B. */
  a: number;
  b: number;
}

const CHOICES: { winner: AbWinner; label: string }[] = [
  { winner: 'a', label: 'A is better' },
  { winner: 'b', label: 'B is better' },
  { winner: 'tie', label: 'Equally good' },
  { winner: 'both_bad', label: 'Both bad' },
];

const REVEAL: Record<AbWinner, string> = {
  a: 'You preferred A',
  b: 'You preferred B',
  tie: 'You rated them equal',
  both_bad: 'You rated both bad',
};

/**
 * The vote under a blind comparison: once both answers are in, four choices; the vote is stored with the model and
 * only then are the checkpoints named. A vote is per prompt: the next message starts a fresh blind round.
 */
export function BlindVote({
  pair,
  prompt,
  ready,
  onVoted,
}: {
  pair: BlindPair;
  prompt: string;
  ready: boolean;
  onVoted: (winner: AbWinner) => void;
}) {
  const vote = useAbVote(pair.modelId);

  if (vote.isSuccess) {
    return (
      <Card className="px-4 py-3" data-testid="blind-reveal" aria-live="polite">
        <p className="text-sm text-fg">
          <span className="font-semibold">{REVEAL[vote.variables.winner]}.</span> A was{' '}
          <span className="font-semibold">step {pair.a}</span>, B was{' '}
          <span className="font-semibold">step {pair.b}</span>. Your vote is saved with the model; send another message
          for the next blind round.
        </p>
      </Card>
    );
  }
  return (
    <Card className="flex flex-wrap items-center gap-3 px-4 py-3" data-testid="blind-vote">
      <p className="mr-auto text-sm font-medium text-fg" id="blind-vote-question">
        {ready ? 'Which answer is better?' : 'Both answers must finish before you vote.'}
      </p>
      <div role="group" aria-labelledby="blind-vote-question" className="flex flex-wrap gap-2">
        {CHOICES.map((c) => (
          <Button
            key={c.winner}
            variant="secondary"
            size="sm"
            disabled={!ready || vote.isPending}
            onClick={() =>
              vote.mutate({ a: pair.a, b: pair.b, winner: c.winner, prompt }, { onSuccess: () => onVoted(c.winner) })
            }
          >
            {c.label}
          </Button>
        ))}
      </div>
      {vote.isError ? (
        <Alert tone="danger" role="alert" className="w-full" title="The vote was not saved">
          {vote.error.message}
        </Alert>
      ) : null}
    </Card>
  );
}
