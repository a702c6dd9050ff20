import Link from 'next/link';
import { Badge } from '@/components/ui/badge';
import { buttonClassName } from '@/components/ui/button';
import { Button } from '@/components/ui/button';
import { CopyButton } from '@/components/ui/copy-button';
import { ChatIcon, TrashIcon } from '@/components/ui/icons';
import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { formatNumber } from '@/lib/client/trajectory-view';
import type { CheckpointDto } from '@/lib/schemas/checkpoints';

interface CheckpointTableProps {
  checkpoints: CheckpointDto[];
  metricColumns: string[];
  bestId: string | null;
  bestMetric: string | null;
  nameFor: (step: number) => string;
  playgroundHrefFor: (step: number) => string;
  onDelete: (checkpoint: CheckpointDto) => void;
}

export function CheckpointTable({ checkpoints, metricColumns, bestId, bestMetric, nameFor, playgroundHrefFor, onDelete }: CheckpointTableProps) {
  return (
    <Table data-testid="checkpoints-table">
      <caption className="sr-only">Checkpoints</caption>
      <thead>
        <tr>
          <Th className="text-right">Step</Th>
          {metricColumns.map((m) => (
            <Th key={m} className="text-right normal-case">
              {m}
            </Th>
          ))}
          <Th className="text-right">Created</Th>
          <Th className="text-right">
            <span className="sr-only">Actions</span>
          </Th>
        </tr>
      </thead>
      <tbody>
        {checkpoints.map((c) => (
          <Tr key={c.id} data-testid="checkpoint-row" data-step={c.step}>
            <Td className="text-right whitespace-nowrap tabular-nums">
              <span className="inline-flex items-center gap-2">
                {c.id === bestId ? (
                  <Badge tone="success" className="text-[11px]">
                    <span data-testid="best-badge">Best</span>
                    <span className="sr-only"> by {bestMetric}</span>
                  </Badge>
                ) : null}
                <span className="font-medium text-fg">{c.step.toLocaleString('en')}</span>
              </span>
            </Td>
            {metricColumns.map((m) => {
              const v = c.metrics[m];
              return (
                <Td key={m} className="text-right tabular-nums">
                  {typeof v === 'number' ? formatNumber(v) : <span className="text-fg-subtle">—</span>}
                </Td>
              );
            })}
            <Td className="text-right whitespace-nowrap text-fg-muted">{c.created_at ? <RelativeTime iso={c.created_at} /> : '—'}</Td>
            <Td className="text-right">
              <div className="inline-flex items-center gap-1">
                <CopyButton value={nameFor(c.step)} iconOnly ariaLabel={`Copy name of step ${c.step}`} variant="ghost" />
                <Link
                  href={playgroundHrefFor(c.step)}
                  className={buttonClassName({ variant: 'ghost', size: 'sm' })}
                  aria-label={`Open step ${c.step} in the playground`}
                >
                  <ChatIcon className="size-3.5" />
                </Link>
                <Button variant="danger-ghost" size="sm" className="w-8 px-0" aria-label={`Delete step ${c.step}`} onClick={() => onDelete(c)}>
                  <TrashIcon className="size-3.5" />
                </Button>
              </div>
            </Td>
          </Tr>
        ))}
      </tbody>
    </Table>
  );
}
