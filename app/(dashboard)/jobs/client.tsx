'use client';

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { EntityJobsTable } from '@/components/jobs/entity-jobs-table';
import { TinkerClientsSection } from '@/components/tinker/tinker-clients-section';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { CursorPager } from '@/components/ui/cursor-pager';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';
import { RetryAlert } from '@/components/ui/retry-alert';
import { SegmentedControl } from '@/components/ui/segmented-control';
import { currentCursor, FIRST_PAGE, type CursorStack } from '@/lib/client/cursor-stack';
import { hrefWithEntity } from '@/lib/client/entity';
import { entityJobsQuery } from '@/lib/client/query-keys';
import { tinkerClientsQuery } from '@/lib/client/tinker-queries';
import type { EntityJobDto } from '@/lib/schemas/training-jobs';

type StatusFilter = 'ALL' | 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'FAILED';
const STATUS_OPTIONS: { value: StatusFilter; label: string }[] = [
  { value: 'ALL', label: 'All' },
  { value: 'RUNNING', label: 'Running' },
  { value: 'QUEUED', label: 'Queued' },
  { value: 'COMPLETED', label: 'Completed' },
  { value: 'FAILED', label: 'Failed or cancelled' },
];

export function JobsClient({
  entity,
  defaultEntity,
  origin,
}: {
  entity: string;
  defaultEntity: string;
  origin: string;
}) {
  const [status, setStatus] = useState<StatusFilter>('ALL');
  const [cursors, setCursors] = useState<CursorStack>(FIRST_PAGE);
  const active = useQuery(entityJobsQuery(entity, { kind: 'active' }));
  const history = useQuery(
    entityJobsQuery(entity, {
      kind: 'page',
      status: status === 'ALL' ? null : status,
      cursor: currentCursor(cursors) ?? null,
    }),
  );
  const activeJobs = active.data?.data ?? [];
  const jobHref = (job: EntityJobDto) => hrefWithEntity(`/jobs/${job.id}`, entity, defaultEntity);
  const modelHref = (job: EntityJobDto) => hrefWithEntity(`/models/${job.model.id}`, entity, defaultEntity);
  const tinker = useQuery(tinkerClientsQuery(entity));
  const tinkerClients = tinker.data?.data ?? [];
  // Training clients sit beside the running jobs when there are any (they are live work too); with none, the card is a
  // short note on how to start one, at the bottom, out of the way of the jobs.
  const tinkerSection = (
    <TinkerClientsSection
      clients={tinkerClients}
      isError={tinker.isError}
      onRetry={() => void tinker.refetch()}
      origin={origin}
      modelHref={(c) => hrefWithEntity(`/models/${c.model_id}`, entity, defaultEntity)}
    />
  );
  const tinkerFirst = tinkerClients.length > 0;

  return (
    <>
      <PageHeader
        title="Jobs"
        description="Every training job of this entity's models: what runs now, what waits and why, and what ran before; and the Tinker training clients that train models call by call."
      />
      <div className="flex flex-col gap-6">
        <Card aria-labelledby="active-jobs-title">
          <CardHeader
            id="active-jobs-title"
            title="Running and queued"
            description="Running first; refreshes every few seconds while anything is active."
          />
          {/* The tables sit flush in their cards, as on every other page: inside the body's padding as well as their
              own cells' they lost 40 px, which at 1280 px was more than the table had to spare. */}
          {active.isError ? (
            <CardBody>
              <RetryAlert title="Could not load the active jobs" onRetry={() => void active.refetch()} />
            </CardBody>
          ) : activeJobs.length === 0 ? (
            <CardBody>
              <p className="text-sm text-fg-muted" data-testid="no-active-jobs">
                Nothing is running or waiting.
              </p>
            </CardBody>
          ) : (
            <EntityJobsTable
              jobs={activeJobs}
              hrefFor={jobHref}
              modelHref={modelHref}
              caption="Running and queued jobs"
            />
          )}
        </Card>

        {tinkerFirst ? tinkerSection : null}

        <Card aria-labelledby="all-jobs-title">
          <CardHeader
            id="all-jobs-title"
            title="All jobs"
            description="Newest first."
            actions={
              <SegmentedControl
                label="Status"
                size="sm"
                value={status}
                options={STATUS_OPTIONS}
                onChange={(value) => {
                  setStatus(value);
                  setCursors(FIRST_PAGE);
                }}
                data-testid="jobs-status-filter"
              />
            }
          />
          {history.isError ? (
            <CardBody>
              <RetryAlert title="Could not load the jobs" onRetry={() => void history.refetch()} />
            </CardBody>
          ) : history.data && history.data.data.length === 0 ? (
            <CardBody>
              <EmptyState
                title={status === 'ALL' ? 'No training job yet' : 'No job with this status'}
                description={
                  status === 'ALL'
                    ? 'Fine-tune a model from the form, or start SFT and RL jobs through the API; they are listed here.'
                    : 'Choose another status to see other jobs.'
                }
              />
            </CardBody>
          ) : (
            <EntityJobsTable
              jobs={history.data?.data ?? []}
              hrefFor={jobHref}
              modelHref={modelHref}
              caption="All jobs, newest first"
            />
          )}
          <CursorPager
            cursors={cursors}
            setCursors={setCursors}
            nextCursor={history.data?.has_more ? history.data.last_id : null}
            testId="jobs"
          />
        </Card>

        {tinkerFirst ? null : tinkerSection}
      </div>
    </>
  );
}
