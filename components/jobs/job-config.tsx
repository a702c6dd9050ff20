import { formatNumber } from '@/lib/client/format/trajectory-view';

function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'default';
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'string' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** An empty object or list (`lora {}`, `extra_settings {}`): an internal default, nothing the user set or can read. */
function isEmptyContainer(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

/**
 * The resolved configuration a job trains with, as a definition list: keys in the order the server sent, empty
 * objects left out. A key is only useful whole: it keeps its width, and a long value wraps (break-all) beside it.
 */
export function JobConfig({ config }: { config: Record<string, unknown> }) {
  const entries = Object.entries(config).filter(([, value]) => !isEmptyContainer(value));
  if (entries.length === 0) return <p className="text-sm text-fg-subtle">No configuration recorded.</p>;
  return (
    <dl className="grid grid-cols-1 gap-x-6 gap-y-2 text-sm sm:grid-cols-2" data-testid="job-config">
      {entries.map(([key, value]) => (
        <div key={key} className="flex min-w-0 items-baseline justify-between gap-3 border-b border-line/70 pb-1.5">
          <dt className="shrink-0 font-mono text-xs text-fg-muted">{key}</dt>
          <dd className="min-w-0 text-right font-mono text-xs break-all text-fg">{formatValue(value)}</dd>
        </div>
      ))}
    </dl>
  );
}
