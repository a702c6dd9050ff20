import { formatNumber } from '@/lib/client/trajectory-view';

function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'default';
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'string' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** The resolved configuration a job trains with, as a definition list: keys in the order the server sent. */
export function JobConfig({ config }: { config: Record<string, unknown> }) {
  const entries = Object.entries(config);
  if (entries.length === 0) return <p className="text-sm text-fg-subtle">No configuration recorded.</p>;
  return (
    <dl className="grid grid-cols-1 gap-x-6 gap-y-2 text-sm sm:grid-cols-2" data-testid="job-config">
      {entries.map(([key, value]) => (
        <div key={key} className="flex min-w-0 items-baseline justify-between gap-3 border-b border-line/70 pb-1.5">
          <dt className="truncate font-mono text-xs text-fg-muted">{key}</dt>
          <dd className="truncate font-mono text-xs text-fg">{formatValue(value)}</dd>
        </div>
      ))}
    </dl>
  );
}
