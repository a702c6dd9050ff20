import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import type { TrainingWorkerDto } from '@/lib/schemas/workers';

const BACKEND_LABEL: Record<string, string> = { builtin: 'built-in models', hf: 'Hugging Face models' };

/** Connected training workers: what each can train and what it runs (a job is named only when it is yours). */
export function TrainingWorkersTable({
  workers,
  jobHref,
}: {
  workers: TrainingWorkerDto[];
  jobHref: (jobId: string) => string;
}) {
  return (
    <Table stacked data-testid="training-workers-table">
      <caption className="sr-only">Connected training workers</caption>
      <thead>
        <tr>
          <Th>Worker</Th>
          <Th>Trains</Th>
          <Th>Device</Th>
          <Th>Status</Th>
          <Th className="text-right">Last seen</Th>
        </tr>
      </thead>
      <tbody>
        {workers.map((w) => (
          <Tr key={w.id} data-testid="training-worker-row">
            <Td label="Worker">
              <div className="font-mono text-xs text-fg">{w.id}</div>
              {typeof w.info.worker === 'string' ? (
                <div className="mt-0.5 text-xs text-fg-subtle">{w.info.worker}</div>
              ) : null}
            </Td>
            <Td label="Trains" className="text-sm text-fg-muted">
              {w.backends.map((b) => BACKEND_LABEL[b] ?? b).join(', ')} ({w.kinds.join(', ').toUpperCase()})
              {w.base_models ? (
                <div className="mt-0.5 text-xs text-fg-subtle">only {w.base_models.join(', ')}</div>
              ) : null}
            </Td>
            <Td label="Device" className="text-sm text-fg-muted">
              {typeof w.info.device === 'string' ? w.info.device : '—'}
            </Td>
            <Td label="Status" className="text-sm">
              {w.status === 'idle' ? (
                <span className="text-fg-muted">idle</span>
              ) : w.current_job_id ? (
                <a href={jobHref(w.current_job_id)} className="text-accent-text hover:underline">
                  training {w.current_base_model ?? 'a job'}
                </a>
              ) : (
                <span className="text-fg-muted">busy (another account&apos;s job)</span>
              )}
            </Td>
            <Td label="Last seen" className="text-right whitespace-nowrap text-fg-muted">
              <RelativeTime iso={w.last_seen_at} />
            </Td>
          </Tr>
        ))}
      </tbody>
    </Table>
  );
}
