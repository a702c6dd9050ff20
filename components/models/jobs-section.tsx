'use client';

import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { JobsTable, modelJobColumns } from '@/components/jobs/jobs-table';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Button } from '@/components/ui/button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { Skeleton } from '@/components/ui/skeleton';
import { jobOutcome } from '@/lib/client/runs/rl-guardrails';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import { modelBaseName } from '@/lib/client/chat/inference-names';
import { allCheckpointsQuery } from '@/lib/client/queries/checkpoints';
import { modelJobsInfiniteQuery } from '@/lib/client/queries/jobs';
import type { ModelSummaryDto } from '@/lib/schemas/models';

/** The model's training jobs, newest first, each with its outcome (an RL job that changed nothing is "No update"). */
export function JobsSection({
  model,
  entity,
  defaultEntity,
  tinker = false,
}: {
  model: ModelSummaryDto;
  entity: string;
  defaultEntity: string;
  /** The model is a Tinker training client: it trains through the SDK (its card says so), so no jobs is no news. */
  tinker?: boolean;
}) {
  const jobs = useInfiniteQuery(modelJobsInfiniteQuery(model.id));
  const rows = jobs.data?.pages.flatMap((p) => p.data) ?? [];
  const all = useQuery(allCheckpointsQuery(model.id));
  const metricsByStep = useMemo(() => new Map((all.data?.data ?? []).map((c) => [c.step, c.metrics])), [all.data]);
  // Live updates come from useModelLive, which polls this list with the rest of the page.
  // A Tinker model without jobs: nothing to list, and no "start a job" prompt for a model trained another way.
  if (tinker && jobs.isSuccess && rows.length === 0) return null;

  return (
    <Card aria-labelledby="jobs-title">
      <CardHeader
        id="jobs-title"
        title="Training jobs"
        description={`Jobs that trained ${modelBaseName(model)}, newest first.`}
      />
      {jobs.isPending ? (
        <div className="space-y-3 p-5" aria-busy="true" aria-label="Loading training jobs">
          <Skeleton className="h-5 w-2/3" />
        </div>
      ) : jobs.isError ? (
        <CardBody>
          <RetryAlert title="Could not load training jobs" onRetry={() => jobs.refetch()}>
            {jobs.error.message}
          </RetryAlert>
        </CardBody>
      ) : rows.length === 0 ? (
        <EmptyState
          title="No training jobs yet"
          description="RL jobs come from POST /v1/preview/training-jobs; SFT jobs from the Fine-tune form or the API."
        />
      ) : (
        <JobsTable
          jobs={rows}
          columns={modelJobColumns((job) => hrefWithEntity(`/jobs/${job.id}`, entity, defaultEntity))}
          outcomeFor={(job) => jobOutcome(job, job.step === null ? null : metricsByStep.get(job.step))}
          caption="Training jobs"
          testId="model-jobs-table"
          rowTestId="model-job-row"
        />
      )}
      {jobs.hasNextPage ? (
        <CardFooter className="justify-center">
          <Button variant="secondary" onClick={() => jobs.fetchNextPage()} pending={jobs.isFetchingNextPage}>
            Load more
          </Button>
        </CardFooter>
      ) : null}
    </Card>
  );
}
