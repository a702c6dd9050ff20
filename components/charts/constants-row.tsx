import { formatNumber } from '@/lib/client/format/trajectory-view';

/** Series that hold one value throughout, as numbers in a row: a flat chart would say nothing more. */
export function ConstantsRow({ constants }: { constants: { metric: string; value: number }[] }) {
  if (constants.length === 0) return null;
  return (
    <p className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-fg-muted" data-testid="constant-metrics">
      <span className="font-medium">Constant:</span>
      {constants.map((c) => (
        <span key={c.metric}>
          <span className="font-mono">{c.metric}</span>{' '}
          <span className="text-fg tabular-nums">{formatNumber(c.value)}</span>
        </span>
      ))}
    </p>
  );
}
