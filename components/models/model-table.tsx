import Link from 'next/link';
import { Badge } from '@/components/ui/badge';
import { RelativeTime } from '@/components/ui/relative-time';
import { Skeleton } from '@/components/ui/skeleton';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { formatNumber } from '@/lib/client/format/trajectory-view';
import type { BestMetricDto, ModelSummaryDto } from '@/lib/schemas/models';

interface ModelTableProps {
  models: ModelSummaryDto[];
  /** Where a row leads (the model page, keeping `?entity=`); without it names are plain text. */
  hrefFor?: (model: ModelSummaryDto) => string;
  /** Run comparison's picking: a checkbox per row when given. */
  selected?: ReadonlySet<string>;
  onToggle?: (model: ModelSummaryDto) => void;
}

export function ModelTable({ models, hrefFor, selected, onToggle }: ModelTableProps) {
  return (
    <Table stacked data-testid="models-table">
      <caption className="sr-only">Models</caption>
      <thead>
        <tr>
          {onToggle ? (
            <Th className="w-8">
              <span className="sr-only">Compare</span>
            </Th>
          ) : null}
          <Th>Name</Th>
          <Th>Project</Th>
          <Th>Base model</Th>
          <Th className="text-right">Latest step</Th>
          <Th className="text-right">Best metric</Th>
          <Th className="text-right">Created</Th>
        </tr>
      </thead>
      <tbody>
        {models.map((model) => (
          <Tr key={model.id} data-testid="model-row" className="relative transition-colors hover:bg-surface-muted/50">
            {onToggle ? (
              <Td label="Compare" className="w-8">
                {/* Above the row-wide link (z-10): ticking a box must not open the model. */}
                <input
                  type="checkbox"
                  className="relative z-10 size-4 cursor-pointer accent-[var(--tb-accent)]"
                  checked={selected?.has(model.id) ?? false}
                  onChange={() => onToggle(model)}
                  aria-label={`Compare ${model.name}`}
                  data-testid="model-compare-checkbox"
                />
              </Td>
            ) : null}
            <Td label="Name">
              {hrefFor ? (
                // The link's box covers the row (the row is `relative`), so the whole row is one click target.
                <Link
                  href={hrefFor(model)}
                  className="font-medium text-fg after:absolute after:inset-0 hover:text-accent-text hover:underline"
                  data-testid="model-link"
                >
                  {model.name}
                </Link>
              ) : (
                <div className="font-medium text-fg">{model.name}</div>
              )}
              {/* Truncated: the full name is in the link's page and the copy buttons there; a long one must not widen the table. */}
              <div
                className="mt-0.5 max-w-56 truncate font-mono text-xs text-fg-subtle"
                title={`${model.entity}/${model.project}/${model.name}`}
              >
                {model.entity}/{model.project}/{model.name}
              </div>
            </Td>
            <Td label="Project">
              {/* May wrap at the project's hyphens (a badge is one line otherwise): a long project name held the
                  table 120 px wider than its card at 1280 px. */}
              <Badge wrap>{model.project}</Badge>
            </Td>
            <Td label="Base model" className="font-mono text-xs whitespace-nowrap text-fg-muted">
              {model.base_model}
            </Td>
            <Td label="Latest step" className="text-right tabular-nums">
              {model.latest_step === null ? (
                <span className="text-fg-subtle" aria-label="No checkpoints">
                  —
                </span>
              ) : (
                <span className="text-fg">{model.latest_step.toLocaleString('en')}</span>
              )}
            </Td>
            <Td label="Best metric" className="text-right whitespace-nowrap" data-testid="model-best-metric">
              <BestMetricCell best={model.best_metric} />
            </Td>
            <Td label="Created" className="text-right whitespace-nowrap text-fg-muted">
              <RelativeTime iso={model.created_at} />
            </Td>
          </Tr>
        ))}
      </tbody>
    </Table>
  );
}

/** The value first (what people compare down the column), then which metric and checkpoint it comes from. */
function BestMetricCell({ best }: { best: BestMetricDto | null }) {
  if (!best) {
    return (
      <span className="text-fg-subtle" aria-label="No metric yet">
        —
      </span>
    );
  }
  return (
    <span className="inline-flex flex-col items-end">
      <span className="text-fg tabular-nums">{formatNumber(best.value)}</span>
      <span className="font-mono text-[11px] text-fg-subtle">
        {best.name} · step {best.step.toLocaleString('en')}
        <span className="sr-only">{best.direction === 'max' ? ' (highest)' : ' (lowest)'}</span>
      </span>
    </span>
  );
}

export function ModelTableSkeleton() {
  return (
    <div aria-busy="true" aria-label="Loading models" className="divide-y divide-line">
      <div className="h-10 bg-surface-muted/70" />
      {Array.from({ length: 4 }, (_, i) => (
        <div key={i} className="flex items-center gap-6 px-5 py-4">
          <Skeleton className="h-4 w-40" />
          <Skeleton className="h-4 w-20" />
          <Skeleton className="h-4 w-32" />
          <Skeleton className="ml-auto h-4 w-16" />
        </div>
      ))}
    </div>
  );
}
