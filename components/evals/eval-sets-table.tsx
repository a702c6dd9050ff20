'use client';

import Link from 'next/link';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { RelativeTime } from '@/components/ui/relative-time';
import { groupSetVersions, timestampIso, type EvalSet } from '@/lib/client/evals/evals';

/** A row per set: its latest version, and every version's examples a click away. */
export function EvalSetsTable({
  sets,
  onViewExamples,
}: {
  sets: readonly EvalSet[];
  onViewExamples: (set: EvalSet) => void;
}) {
  const groups = groupSetVersions(sets);
  return (
    <Table stacked data-testid="eval-sets-table">
      <caption className="sr-only">Eval sets: the latest version of each, with every version&apos;s examples</caption>
      <thead>
        <tr>
          <Th>Set</Th>
          <Th className="text-right">Examples</Th>
          <Th>Versions</Th>
          <Th>Uploaded</Th>
          <Th>
            <span className="sr-only">Actions</span>
          </Th>
        </tr>
      </thead>
      <tbody>
        {groups.map((versions) => {
          const latest = versions[0];
          const iso = timestampIso(latest.created_at);
          return (
            <Tr key={latest.id} data-testid="eval-set-row" data-name={latest.name}>
              <Td label="Set">
                <span className="font-medium wrap-anywhere text-fg">{latest.name}</span>
                <span className="block font-mono text-xs wrap-anywhere text-fg-subtle">
                  {latest.entity ? `${latest.entity}/` : ''}
                  {latest.project}
                </span>
              </Td>
              <Td label="Examples" className="text-right tabular-nums" data-testid="eval-set-examples">
                {latest.num_examples.toLocaleString('en')}
              </Td>
              <Td label="Versions">
                <ul className="flex flex-wrap gap-1" aria-label={`Versions of ${latest.name}`}>
                  {versions.map((v) => (
                    <li key={v.id}>
                      <button
                        type="button"
                        onClick={() => onViewExamples(v)}
                        className="rounded-md border border-line px-1.5 py-0.5 font-mono text-xs text-fg-muted hover:border-accent hover:text-accent-text"
                        aria-label={`View the examples of ${latest.name} v${v.version}`}
                        data-testid="eval-set-version"
                      >
                        v{v.version}
                      </button>
                    </li>
                  ))}
                </ul>
              </Td>
              <Td label="Uploaded" className="text-sm whitespace-nowrap text-fg-muted">
                {iso ? <RelativeTime iso={iso} /> : '—'}
              </Td>
              <Td className="text-right whitespace-nowrap">
                <button
                  type="button"
                  className="mr-3 text-sm font-medium text-accent-text hover:underline"
                  onClick={() => onViewExamples(latest)}
                  data-testid="eval-set-view"
                >
                  Examples
                </button>
                <Link
                  href={`/evals/new?set=${encodeURIComponent(latest.id)}`}
                  className="text-sm font-medium text-accent-text hover:underline"
                  data-testid="eval-set-run"
                >
                  Run
                </Link>
              </Td>
            </Tr>
          );
        })}
      </tbody>
    </Table>
  );
}
