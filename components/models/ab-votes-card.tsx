'use client';

import { useQuery } from '@tanstack/react-query';
import { Card, CardHeader } from '@/components/ui/card';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { abVotesQuery } from '@/lib/client/queries/ab-votes';
import type { AbVoteTally } from '@/lib/schemas/ab-votes';

/** "step 5" when one step of the pair won more votes, else "neither". */
function preferred(t: AbVoteTally): string {
  if (t.high_wins === t.low_wins) return 'Neither';
  return `Step ${t.high_wins > t.low_wins ? t.high_step : t.low_step}`;
}

/**
 * What people preferred when they compared two checkpoints blind in the playground, per pair of steps. Absent until
 * the first vote: the playground's Blind A/B button is where votes come from.
 */
export function AbVotesCard({ modelId }: { modelId: string }) {
  const votes = useQuery(abVotesQuery(modelId));
  const rows = votes.data?.data ?? [];
  if (rows.length === 0) return null;
  return (
    <Card aria-labelledby="ab-votes-title" data-testid="ab-votes">
      <CardHeader
        id="ab-votes-title"
        title="Blind comparisons"
        description="Votes from the playground's Blind A/B, where people chose between two checkpoints' answers without knowing which was which."
      />
      <Table stacked>
        <caption className="sr-only">Blind A/B votes per pair of checkpoints</caption>
        <thead>
          <tr>
            <Th>Pair</Th>
            <Th className="text-right">Votes</Th>
            <Th>Preferred</Th>
            <Th className="text-right">Wins (later : earlier)</Th>
            <Th className="text-right">Equal</Th>
            <Th className="text-right">Both bad</Th>
          </tr>
        </thead>
        <tbody>
          {rows.map((t) => (
            <Tr key={`${t.low_step}-${t.high_step}`} data-testid="ab-vote-row">
              <Td label="Pair" className="whitespace-nowrap">
                Step {t.high_step} vs step {t.low_step}
              </Td>
              <Td label="Votes" className="text-right tabular-nums">
                {t.votes}
              </Td>
              <Td label="Preferred" className="font-medium">
                {preferred(t)}
              </Td>
              <Td label="Wins" className="text-right whitespace-nowrap tabular-nums">
                {t.high_wins} : {t.low_wins}
              </Td>
              <Td label="Equal" className="text-right tabular-nums">
                {t.ties}
              </Td>
              <Td label="Both bad" className="text-right tabular-nums">
                {t.both_bad}
              </Td>
            </Tr>
          ))}
        </tbody>
      </Table>
    </Card>
  );
}
