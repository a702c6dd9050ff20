import Link from 'next/link';
import { BreakableText } from '@/components/ui/breakable-text';
import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import type { TrainingWorkerDto } from '@/lib/schemas/training-workers';

const BACKEND_LABEL: Record<string, string> = { builtin: 'built-in models', hf: 'Hugging Face models' };
const KIND_LABEL: Record<string, string> = { rl: 'RL', sft: 'SFT', tinker: 'Tinker' };

/**
 * The Tinker training clients a worker holds in memory (docs/tinker.md §3): how many, and each one's base model,
 * linked to its model when it is the caller's (another account's are counted, never named).
 */
function HeldClients({ clients }: { clients: TrainingWorkerDto['training_clients'] }) {
  if (clients.length === 0) return <span className="text-fg-subtle">—</span>;
  const hidden = clients.filter((c) => c.model_id === null);
  const hiddenBases = [...new Set(hidden.map((c) => c.base_model))];
  return (
    <div className="max-w-72 min-w-40 space-y-1" data-testid="worker-tinker-clients">
      <p className="text-sm text-fg" data-testid="worker-tinker-count">
        {clients.length} training client{clients.length === 1 ? '' : 's'}
      </p>
      <ul className="space-y-1">
        {clients.map((c) => {
          if (c.model_id === null) return null;
          return (
            <li key={c.model_id} className="text-xs" data-testid="worker-tinker-client">
              <Link href={`/models/${c.model_id}`} className="font-medium text-accent-text hover:underline">
                {c.model_name ? <BreakableText text={c.model_name} /> : `model ${c.model_id.slice(0, 8)}`}
              </Link>
              <span className="block font-mono text-fg-muted">
                <BreakableText text={c.base_model} />
              </span>
            </li>
          );
        })}
        {hidden.length > 0 ? (
          <li className="text-xs text-fg-muted">
            {hidden.length} of another account ({hiddenBases.join(', ')})
          </li>
        ) : null}
      </ul>
    </div>
  );
}

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
          <Th>Tinker clients</Th>
          <Th className="text-right">Last seen</Th>
        </tr>
      </thead>
      <tbody>
        {workers.map((w) => {
          const holding = w.training_clients.length > 0;
          return (
            <Tr key={w.id} data-testid="training-worker-row">
              <Td label="Worker">
                <div className="font-mono text-xs text-fg">{w.id}</div>
                {typeof w.info.worker === 'string' ? (
                  <div className="mt-0.5 text-xs text-fg-subtle">{w.info.worker}</div>
                ) : null}
              </Td>
              <Td label="Trains" className="text-sm text-fg-muted">
                {w.backends.map((b) => BACKEND_LABEL[b] ?? b).join(', ')}{' '}
                <span data-testid="worker-kinds">({w.kinds.map((k) => KIND_LABEL[k] ?? k).join(', ')})</span>
                {w.base_models ? (
                  <div className="mt-0.5 text-xs text-fg-subtle">
                    only <BreakableText text={w.base_models.join(', ')} />
                  </div>
                ) : null}
              </Td>
              <Td label="Device" className="text-sm text-fg-muted">
                {typeof w.info.device === 'string' ? w.info.device : '—'}
              </Td>
              <Td label="Status" className="text-sm" data-testid="worker-status">
                {w.current_job_id ? (
                  <a href={jobHref(w.current_job_id)} className="text-accent-text hover:underline">
                    training {w.current_base_model ?? 'a job'}
                  </a>
                ) : w.status === 'idle' ? (
                  <span className="text-fg-muted">idle</span>
                ) : holding ? (
                  // A worker that holds training clients takes no jobs until they are closed (lib/services/training-workers).
                  <span className="text-fg-muted">busy with Tinker training clients (no jobs until they close)</span>
                ) : (
                  <span className="text-fg-muted">busy (another account&apos;s job)</span>
                )}
              </Td>
              <Td label="Tinker clients" className="text-sm">
                <HeldClients clients={w.training_clients} />
              </Td>
              <Td label="Last seen" className="text-right whitespace-nowrap text-fg-muted">
                <RelativeTime iso={w.last_seen_at} />
              </Td>
            </Tr>
          );
        })}
      </tbody>
    </Table>
  );
}
