'use client';

import Link from 'next/link';
import { Button } from '@/components/ui/button';
import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { useCancelEvalRun } from '@/lib/client/queries/evals';
import {
  formatScore,
  isActiveRun,
  scorerNames,
  targetLabel,
  timestampIso,
  type EvalRun,
} from '@/lib/client/evals/evals';
import { EvalProgress, EvalStatusBadge } from './eval-status';

/** Runs newest first: status, live progress, each target's mean on the first scorer, and cancel while open. */
export function EvalRunsTable({ runs }: { runs: readonly EvalRun[] }) {
  return (
    <Table stacked data-testid="eval-runs-table">
      <caption className="sr-only">Eval runs, newest first</caption>
      <thead>
        <tr>
          <Th>Run</Th>
          <Th>Status</Th>
          <Th>Progress</Th>
          <Th>Summary</Th>
          <Th>Started</Th>
          <Th>
            <span className="sr-only">Actions</span>
          </Th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => {
          const scorer = scorerNames(run)[0];
          const iso = timestampIso(run.created_at);
          return (
            <Tr key={run.id} data-testid="eval-run-row">
              <Td label="Run">
                <Link
                  href={`/evals/runs/${encodeURIComponent(run.id)}`}
                  className="font-medium wrap-anywhere text-fg hover:text-accent-text hover:underline"
                  data-testid="eval-run-link"
                >
                  {run.name || (run.eval_set ? `${run.eval_set.name} v${run.eval_set.version}` : 'Eval run')}
                </Link>
                <span className="block text-xs text-fg-subtle">
                  {run.eval_set ? `${run.eval_set.project}/${run.eval_set.name} v${run.eval_set.version} · ` : ''}
                  {run.targets.length} target{run.targets.length === 1 ? '' : 's'}
                </span>
              </Td>
              <Td label="Status">
                <EvalStatusBadge status={run.status} />
              </Td>
              <Td label="Progress" className="min-w-36">
                <EvalProgress run={run} compact />
              </Td>
              <Td label="Summary">
                {scorer && run.summary.length ? (
                  <div className="text-xs">
                    <span className="font-mono text-fg-subtle">{scorer}</span>
                    <ul className="mt-0.5 flex flex-col gap-0.5">
                      {run.targets.slice(0, 4).map((t) => (
                        <li key={t.name} className="flex justify-between gap-3 tabular-nums" title={t.name}>
                          <span className="min-w-0 wrap-anywhere text-fg-muted">{targetLabel(t.name)}</span>
                          <span className="font-medium text-fg">
                            {formatScore(run.summary.find((r) => r.target === t.name && r.scorer === scorer)?.mean)}
                          </span>
                        </li>
                      ))}
                      {run.targets.length > 4 ? (
                        <li className="text-fg-subtle">and {run.targets.length - 4} more</li>
                      ) : null}
                    </ul>
                  </div>
                ) : (
                  <span className="text-xs text-fg-subtle">{run.error ?? '—'}</span>
                )}
              </Td>
              <Td label="Started" className="text-sm whitespace-nowrap text-fg-muted">
                {iso ? <RelativeTime iso={iso} /> : '—'}
              </Td>
              <Td className="text-right">{isActiveRun(run.status) ? <CancelRunButton runId={run.id} /> : null}</Td>
            </Tr>
          );
        })}
      </tbody>
    </Table>
  );
}

export function CancelRunButton({ runId, size = 'sm' }: { runId: string; size?: 'sm' | 'md' }) {
  const cancel = useCancelEvalRun(runId);
  return (
    <span className="inline-flex flex-col items-end gap-1">
      <Button
        variant="danger-ghost"
        size={size}
        pending={cancel.isPending}
        onClick={() => cancel.mutate()}
        data-testid="eval-run-cancel"
      >
        Cancel run
      </Button>
      {cancel.isError ? (
        <span role="alert" className="text-xs text-danger-text">
          {cancel.error.message}
        </span>
      ) : null}
    </span>
  );
}
