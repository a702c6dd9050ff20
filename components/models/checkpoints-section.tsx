'use client';

import { useDeleteCheckpoints } from '@/lib/client/queries/mutations';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { CheckpointTable } from '@/components/models/checkpoint-table';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { CursorPager } from '@/components/ui/cursor-pager';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { EmptyState } from '@/components/ui/empty-state';
import { Select } from '@/components/ui/input';
import { Skeleton } from '@/components/ui/skeleton';
import {
  bestTie,
  checkpointMetricKeys,
  defaultBestMetric,
  metricDirection,
  selectBestCheckpoint,
  type MetricDirection,
} from '@/lib/client/runs/best-checkpoint';
import { currentCursor, FIRST_PAGE, popCursor, type CursorStack } from '@/lib/client/navigation/cursor-stack';
import { checkpointNames, playgroundHref, stepName } from '@/lib/client/chat/inference-names';
import { allCheckpointsQuery, checkpointPageQuery } from '@/lib/client/queries/checkpoints';
import { type CheckpointDto } from '@/lib/schemas/checkpoints';
import type { ModelSummaryDto } from '@/lib/schemas/models';

// Three metric columns beside step, age and actions fit a laptop-wide card: more would push the row actions out of view.
const MAX_METRIC_COLUMNS = 3;

/** The model's checkpoints, newest first, paged, with the best-by-metric badge and their actions (delete asks first). */
export function CheckpointsSection({
  model,
  fineTuneHrefFor,
}: {
  model: ModelSummaryDto;
  fineTuneHrefFor: (step: number) => string;
}) {
  const [cursors, setCursors] = useState<CursorStack>(FIRST_PAGE);
  const page = useQuery(checkpointPageQuery(model.id, currentCursor(cursors)));
  const all = useQuery(allCheckpointsQuery(model.id));
  const [chosenMetric, setChosenMetric] = useState<string | null>(null);
  const [direction, setDirection] = useState<MetricDirection | null>(null);
  const [toDelete, setToDelete] = useState<CheckpointDto | null>(null);

  const keys = useMemo(
    () => checkpointMetricKeys([...(all.data?.data ?? []), ...(page.data?.data ?? [])]),
    [all.data, page.data],
  );
  const metric = chosenMetric && keys.includes(chosenMetric) ? chosenMetric : defaultBestMetric(keys);
  const dir = direction ?? (metric ? metricDirection(metric) : 'max');
  const top = metric && all.data ? selectBestCheckpoint(all.data.data, metric, dir) : null;
  // Every checkpoint scored the same: none is best (the later step would win only by the tie rule).
  const allTied = metric && all.data ? bestTie(all.data.data, metric, top).allTied : false;
  const best = allTied ? null : top;
  const columns = metric ? [metric, ...keys.filter((k) => k !== metric)].slice(0, MAX_METRIC_COLUMNS) : [];

  const remove = useDeleteCheckpoints(model.id);

  const rows = page.data?.data ?? [];

  return (
    <Card aria-labelledby="checkpoints-title">
      <CardHeader
        id="checkpoints-title"
        title="Checkpoints"
        description={
          <>
            {`${model.checkpoint_count.toLocaleString('en')} checkpoint${model.checkpoint_count === 1 ? '' : 's'}, newest step first.`}
            {/* A job's checkpoint holds one number per metric for a whole job (docs/contract.md §2.6): say which,
                so an SFT job's train/loss is not read as where its loss ended. train/loss is only ever a job's. */}
            {keys.includes('train/loss') ? (
              <span className="mt-1 block" data-testid="train-mean-note">
                A training job&rsquo;s train/* values are its means over its gradient steps; val/* are its last
                evaluation. The training curve has every step.
              </span>
            ) : null}
            {keys.length > 0 && !metric ? (
              <span className="mt-1 block" data-testid="best-hint">
                No best checkpoint: there is no validation metric to rank by (train metrics reward memorising and reward
                hacking). Hold examples out when fine-tuning (Validation), log a val split with POST …/log, or pick a
                metric under “Best by”.
              </span>
            ) : null}
          </>
        }
        actions={
          keys.length > 0 ? (
            <div className="flex items-center gap-2">
              <label htmlFor="best-metric" className="text-xs text-fg-muted">
                Best by
              </label>
              <Select
                id="best-metric"
                value={metric ?? ''}
                onChange={(e) => setChosenMetric(e.target.value || null)}
                className="w-44"
                data-testid="best-metric"
              >
                {metric ? null : <option value="">None</option>}
                {keys.map((k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </Select>
              <label htmlFor="best-direction" className="sr-only">
                Better is
              </label>
              <Select
                id="best-direction"
                value={dir}
                onChange={(e) => setDirection(e.target.value === 'min' ? 'min' : 'max')}
                className="w-28"
              >
                <option value="max">highest</option>
                <option value="min">lowest</option>
              </Select>
            </div>
          ) : null
        }
      />
      {page.isPending ? (
        <div className="space-y-3 p-5" aria-busy="true" aria-label="Loading checkpoints">
          <Skeleton className="h-5 w-2/3" />
          <Skeleton className="h-5 w-1/2" />
        </div>
      ) : page.isError ? (
        <CardBody>
          <RetryAlert title="Could not load checkpoints" onRetry={() => page.refetch()}>
            {page.error.message}
          </RetryAlert>
        </CardBody>
      ) : rows.length === 0 ? (
        <EmptyState title="No checkpoints" description="Each completed training job adds one." />
      ) : (
        <CheckpointTable
          checkpoints={rows}
          metricColumns={columns}
          bestId={best?.id ?? null}
          bestMetric={metric}
          allTied={allTied}
          namesFor={(s) => checkpointNames(model, s)}
          playgroundHrefFor={(s) => playgroundHref(model, s)}
          fineTuneHrefFor={fineTuneHrefFor}
          onDelete={(c) => {
            remove.reset();
            setToDelete(c);
          }}
        />
      )}
      <CursorPager
        cursors={cursors}
        setCursors={setCursors}
        nextCursor={page.data?.has_more ? page.data.last_id : null}
        testId="checkpoints"
      />
      <ConfirmDialog
        open={toDelete !== null}
        title={`Delete step ${toDelete?.step ?? ''}?`}
        description={
          <>
            <span className="font-mono text-fg">{toDelete ? stepName(model, toDelete.step) : ''}</span> and its weights
            are removed. The run history keeps its metrics. This cannot be undone.
          </>
        }
        confirmLabel="Delete checkpoint"
        pending={remove.isPending}
        error={remove.error?.message ?? null}
        onConfirm={() =>
          toDelete &&
          remove.mutate([toDelete.step], {
            onSuccess: () => {
              // Deleting the only row of a later page would leave it empty: step back instead of showing nothing.
              if (rows.length === 1) setCursors(popCursor);
              setToDelete(null);
            },
          })
        }
        onCancel={() => setToDelete(null)}
      />
    </Card>
  );
}
