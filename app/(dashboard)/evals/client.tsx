'use client';

import { useQuery } from '@tanstack/react-query';
import dynamic from 'next/dynamic';
import Link from 'next/link';
import { useQueryStates } from 'nuqs';
import { useState } from 'react';
import { EvalRunsTable } from '@/components/evals/eval-runs-table';
import { EvalSetsTable } from '@/components/evals/eval-sets-table';
import { UploadEvalSet } from '@/components/evals/upload-eval-set';
import { buttonClassName } from '@/components/ui/button';
import { Card, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { PlusIcon } from '@/components/ui/icons';
import { PageHeader } from '@/components/ui/page-header';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Skeleton } from '@/components/ui/skeleton';
import { evalRunsQuery, evalSetsQuery } from '@/lib/client/queries/evals';
import type { EvalSet } from '@/lib/client/evals/evals';
import { evalsSearchParsers } from './search-params';

// Opens on a click: its own chunk.
const ExamplesDialog = dynamic(() => import('@/components/evals/examples-dialog'), { ssr: false });

export function EvalsClient({ entity }: { entity: string }) {
  const [{ model_id: modelId, set: setId }, setUrl] = useQueryStates(evalsSearchParsers, { history: 'replace' });
  const filter: Record<string, string> = modelId ? { model_id: modelId } : setId ? { eval_set_id: setId } : {};
  const runs = useQuery(evalRunsQuery(filter));
  const sets = useQuery(evalSetsQuery());
  const [viewing, setViewing] = useState<EvalSet | null>(null);
  const filteredSet = setId ? sets.data?.data.find((s) => s.id === setId) : undefined;

  return (
    <>
      <PageHeader
        title="Evals"
        description="Score checkpoints on fixed sets of examples, and see on which examples a step got better or worse."
        actions={
          <Link href="/evals/new" className={buttonClassName()} data-testid="new-eval-run">
            <PlusIcon className="size-4" />
            New run
          </Link>
        }
      />
      <div className="flex flex-col gap-6">
        <Card aria-labelledby="eval-runs-title">
          <CardHeader
            id="eval-runs-title"
            title="Runs"
            description={
              modelId || setId ? (
                <>
                  {modelId
                    ? 'Runs that scored this model. '
                    : `Runs on ${filteredSet ? filteredSet.name : 'one set'}. `}
                  <button
                    type="button"
                    className="font-medium text-accent-text hover:underline"
                    onClick={() => void setUrl({ model_id: null, set: null })}
                  >
                    Show every run
                  </button>
                </>
              ) : (
                'Newest first; an open run updates as it goes.'
              )
            }
          />
          {runs.isError ? (
            <div className="p-4">
              <RetryAlert title="Could not load the runs" onRetry={() => runs.refetch()}>
                {runs.error.message}
              </RetryAlert>
            </div>
          ) : runs.isPending ? (
            <div className="p-4">
              <Skeleton className="h-24 w-full" />
            </div>
          ) : runs.data.data.length === 0 ? (
            <EmptyState
              title="No eval runs yet"
              description="Upload a set below, then start a run on two checkpoints to see which one answers better."
            />
          ) : (
            <EvalRunsTable runs={runs.data.data} />
          )}
        </Card>

        <Card aria-labelledby="eval-sets-title">
          <CardHeader id="eval-sets-title" title="Sets" description="Every upload of a name is a new version." />
          {sets.isError ? (
            <div className="p-4">
              <RetryAlert title="Could not load the eval sets" onRetry={() => sets.refetch()}>
                {sets.error.message}
              </RetryAlert>
            </div>
          ) : sets.isPending ? (
            <div className="p-4">
              <Skeleton className="h-24 w-full" />
            </div>
          ) : sets.data.data.length === 0 ? (
            <EmptyState title="No eval sets yet" description="Upload one below." />
          ) : (
            <EvalSetsTable sets={sets.data.data} onViewExamples={setViewing} />
          )}
        </Card>

        <UploadEvalSet entity={entity} />
      </div>
      <ExamplesDialog set={viewing} onClose={() => setViewing(null)} />
    </>
  );
}
