'use client';

import { useQuery } from '@tanstack/react-query';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { RetryAlert } from '@/components/ui/retry-alert';
import { TrainingWorkersTable } from '@/components/workers/training-workers-table';
import { trainingWorkersQuery } from '@/lib/client/queries/workers';

export function WorkersClient() {
  const workers = useQuery(trainingWorkersQuery());
  return (
    <>
      <div className="mb-6">
        <h1 className="text-2xl font-semibold tracking-tight text-fg">Training workers</h1>
        <p className="mt-1 text-sm text-fg-muted">
          Processes that train jobs: the server&apos;s built-in runner for built-in models, and Python workers
          (tuneboard-worker) for Hugging Face models, which also hold Tinker training clients. A queued job waits until
          a worker that can train its base model is connected.
        </p>
      </div>
      <Card aria-labelledby="workers-title">
        <CardHeader
          id="workers-title"
          title="Connected now"
          description="Seen within the last lease period; refreshes every 5 s."
        />
        <CardBody>
          {workers.isError ? (
            <RetryAlert title="Could not load the workers" onRetry={() => void workers.refetch()} />
          ) : workers.data && workers.data.data.length === 0 ? (
            <EmptyState
              title="No worker is connected"
              description="Start one with tuneboard-worker (see docs/real-models.md); built-in models train on the server's own runner."
            />
          ) : (
            <TrainingWorkersTable workers={workers.data?.data ?? []} jobHref={(id) => `/jobs/${id}`} />
          )}
        </CardBody>
      </Card>
    </>
  );
}
