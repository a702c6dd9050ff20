'use client';

import { useCancelJob } from '@/lib/client/queries/mutations';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { Breadcrumb } from '@/components/ui/breadcrumb';
import { useMemo, useRef, useState } from 'react';
import { remainingMs, useNowEverySecond } from '@/lib/client/hooks/use-now';
import { ChartControls } from '@/components/charts/metric-charts-panel';
import { ConstantsRow } from '@/components/charts/constants-row';
import { effectiveSmoothing, foldConstants } from '@/lib/client/charts/chart-sections';
import { MetricChartCard } from '@/components/charts/metric-chart-card';
import { JobConfig } from '@/components/jobs/job-config';
import { JobEventsTable } from '@/components/jobs/job-events-table';
import { JobProgress } from '@/components/jobs/job-progress';
import { JobPhase } from '@/components/jobs/job-speed';
import { ResubmitJobButton } from '@/components/jobs/resubmit-job-button';
import { jobKindLabel, JobStatusBadge } from '@/components/jobs/job-status-badge';
import { Alert } from '@/components/ui/alert';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Button } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { CursorPager } from '@/components/ui/cursor-pager';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { EmptyState } from '@/components/ui/empty-state';

import { RelativeTime } from '@/components/ui/relative-time';
import { Select } from '@/components/ui/input';
import { SegmentedControl } from '@/components/ui/segmented-control';
import { Skeleton } from '@/components/ui/skeleton';
import { apiFetch } from '@/lib/client/api/api-fetch';
import { currentCursor, FIRST_PAGE, pageNumber, type CursorStack } from '@/lib/client/navigation/cursor-stack';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import { formatDateTime, formatDuration } from '@/lib/client/format/format-time';
import { playgroundHref } from '@/lib/client/chat/inference-names';
import { gradientStepCharts } from '@/lib/client/charts/job-events';
import { isTerminalStatus, pollDelay } from '@/lib/client/runs/poll-backoff';
import { groupCountsFromConfig, jobOutcome } from '@/lib/client/runs/rl-guardrails';
import { useQueryStates } from 'nuqs';
import { allCheckpointsQuery } from '@/lib/client/queries/checkpoints';
import {
  EVENT_PAGE_SIZE,
  type EventListView,
  eventViewOf,
  eventViewParsers,
  fetchEventsAfter,
  jobEventKeys,
  jobEventPageQuery,
} from '@/lib/client/queries/job-events';
import { jobKeys, jobQuery } from '@/lib/client/queries/jobs';
import { modelQuery } from '@/lib/client/queries/models';
import { EVENT_TYPES, trainingJobSchema, type JobEventDto, type TrainingJobDto } from '@/lib/schemas/training-jobs';

interface JobDetailClientProps {
  jobId: string;
  entity: string;
  defaultEntity: string;
  /** From the URL: the events' order and type filter. */
}

/**
 * The live tail: the job and every event so far, refetched with backoff (1 s after a change, up to 5 s
 * while nothing moves) until the job is terminal. Each poll reads the job first and the events after,
 * so the poll that first sees a terminal status also holds the terminal event. Events only append, so a
 * poll asks for those after the last one it has.
 */
function useJobTail(jobId: string) {
  const queryClient = useQueryClient();
  const unchanged = useRef(0);
  return useQuery({
    queryKey: jobEventKeys.every(jobId),
    queryFn: async ({ signal }): Promise<{ job: TrainingJobDto; events: JobEventDto[] }> => {
      const previous = queryClient.getQueryData<{ job: TrainingJobDto; events: JobEventDto[] }>(
        jobEventKeys.every(jobId),
      );
      const job = await apiFetch(`/v1/preview/training-jobs/${jobId}`, trainingJobSchema, { signal });
      const fresh = await fetchEventsAfter(jobId, previous?.events.at(-1)?.id, signal);
      const changed =
        fresh.length > 0 ||
        !previous ||
        previous.job.status !== job.status ||
        previous.job.completed_steps !== job.completed_steps;
      unchanged.current = changed ? 0 : unchanged.current + 1;
      queryClient.setQueryData(jobKeys.summary(jobId), job);
      // The visible events page may have grown: refresh the paged table's queries (not this one).
      if (fresh.length > 0) void queryClient.invalidateQueries({ queryKey: [...jobEventKeys.all(jobId), 'page'] });
      return { job, events: [...(previous?.events ?? []), ...fresh] };
    },
    refetchInterval: (query) => {
      const status = query.state.data?.job.status;
      return status && isTerminalStatus(status) ? false : pollDelay(unchanged.current);
    },
    // Background tabs need no live tail; polling resumes on return.
    refetchIntervalInBackground: false,
    staleTime: 0,
  });
}

/**
 * How long the job ran, or has run so far and has left. It alone ticks every second: with the clock in the page, the
 * whole page (charts and event table) rendered again each second, and a page left open on a training job kept a
 * third of a core busy.
 */
function JobDuration({ job }: { job: TrainingJobDto }) {
  const now = useNowEverySecond(job.status === 'RUNNING');
  const end = job.finished_at ? new Date(job.finished_at).getTime() : null;
  const start = job.started_at ? new Date(job.started_at).getTime() : null;
  if (start === null) return '—';
  if (end !== null) return formatDuration(end - start);
  if (now === null) return 'running';
  // The estimate assumes the steps to come take as long as those done (they have the same batch size).
  const left = remainingMs(now - start, job.completed_steps, job.num_sequences);
  return `${formatDuration(now - start)} so far${left === null ? '' : `, about ${formatDuration(left)} left`}`;
}

export function JobDetailClient({ jobId, entity, defaultEntity }: JobDetailClientProps) {
  const summary = useQuery(jobQuery(jobId));
  const tail = useJobTail(jobId);
  const job = tail.data?.job ?? summary.data;
  const model = useQuery({ ...modelQuery(job?.model_id ?? ''), enabled: Boolean(job), retry: false });
  const [cursors, setCursors] = useState<CursorStack>(FIRST_PAGE);
  // The events' order and type filter live in the URL (`?events=oldest&event_type=…`): a reload or a link keeps them.
  const [viewParams, setViewParams] = useQueryStates(eventViewParsers, { history: 'replace' });
  const eventView = eventViewOf(viewParams);
  const { newestFirst } = eventView;
  const page = useQuery(jobEventPageQuery(jobId, currentCursor(cursors), eventView));
  const setEventView = (view: EventListView) => {
    void setViewParams({ events: view.newestFirst ? null : 'oldest', event_type: view.type });
    setCursors(FIRST_PAGE);
  };
  const [confirmCancel, setConfirmCancel] = useState(false);
  const [smoothing, setSmoothing] = useState(0);
  const [logScale, setLogScale] = useState(false);
  // On the events alone: a poll that only moves the job's status or step count keeps the charts (memoised) as they are.
  const tailEvents = tail.data?.events;
  const { charts, constants } = useMemo(() => foldConstants(gradientStepCharts(tailEvents ?? [])), [tailEvents]);

  const cancel = useCancelJob(jobId);
  // An RL job that completed without a gradient step changed nothing. Its config tells that much; its checkpoint's
  // group counts say why, from the same list the model page caches, fetched only for such a job.
  const fromConfig = job ? jobOutcome(job, groupCountsFromConfig(job.config)) : undefined;
  const checkpoints = useQuery({
    ...allCheckpointsQuery(job?.model_id ?? ''),
    enabled: fromConfig?.kind === 'no-update',
  });
  const metrics = checkpoints.data?.data.find((c) => c.step === job?.step)?.metrics;
  const outcome = job && metrics ? jobOutcome(job, metrics) : fromConfig;

  if (!job) {
    return summary.isError ? (
      <RetryAlert title="Could not load this job" onRetry={() => summary.refetch()}>
        {summary.error.message}
      </RetryAlert>
    ) : (
      <div aria-busy="true" aria-label="Loading job" className="space-y-4">
        <Skeleton className="h-8 w-64" />
        <Skeleton className="h-40 w-full" />
      </div>
    );
  }

  const terminal = isTerminalStatus(job.status);
  const modelHref = hrefWithEntity(`/models/${job.model_id}`, entity, defaultEntity);
  const events = page.data?.data ?? [];

  return (
    <>
      <Breadcrumb
        items={[
          { label: 'Models', href: hrefWithEntity('/models', entity, defaultEntity) },
          { label: model.data?.name ?? 'Model', href: modelHref, testId: 'job-model-link' },
        ]}
      />
      <div className="mb-6 flex flex-wrap items-start justify-between gap-4">
        <div className="min-w-0">
          <h1 className="flex flex-wrap items-center gap-3 text-2xl font-semibold tracking-tight text-fg">
            {jobKindLabel(job.type)} training job
            <JobStatusBadge status={job.status} outcome={outcome} cancelled={job.cancelled} />
          </h1>
          <p className="mt-1 font-mono text-xs text-fg-subtle">{job.id}</p>
        </div>
        {!terminal ? (
          <Button variant="danger-ghost" onClick={() => setConfirmCancel(true)} data-testid="cancel-job">
            Cancel job
          </Button>
        ) : job.status === 'FAILED' ? (
          <ResubmitJobButton jobId={job.id} entity={entity} defaultEntity={defaultEntity} />
        ) : null}
      </div>

      <div className="flex flex-col gap-6">
        {job.status === 'QUEUED' && job.waiting_reason ? (
          <Alert tone="info" title="Queued" role="status">
            <p data-testid="job-waiting-reason">{job.waiting_reason}</p>
            <p className="mt-1">
              <Link href="/workers" className="text-accent-text hover:underline">
                See the connected workers
              </Link>
            </p>
          </Alert>
        ) : null}
        {outcome?.kind === 'no-update' ? (
          <Alert tone="info" title={outcome.label} role="status">
            <p data-testid="job-no-update">{outcome.detail}</p>
          </Alert>
        ) : null}
        {job.cancelled ? (
          <Alert tone="info" title="Cancelled" role="status">
            <p data-testid="job-cancelled">
              This job was cancelled before it finished; its model keeps the checkpoints it had.
            </p>
          </Alert>
        ) : job.status === 'FAILED' && job.error_message ? (
          <Alert tone="danger" title="The job failed" role="status">
            <pre
              className="max-h-80 overflow-auto font-mono text-xs break-words whitespace-pre-wrap"
              data-testid="job-error"
            >
              {job.error_message}
            </pre>
          </Alert>
        ) : null}

        <Card aria-labelledby="job-summary-title">
          <CardHeader
            id="job-summary-title"
            title="Progress"
            description={terminal ? undefined : 'Updates live while the job runs.'}
          />
          <CardBody className="space-y-5">
            {/* Claimed, before training_started: no total yet, so the phase line says what happens instead of "0 steps". */}
            {job.status === 'RUNNING' && job.num_sequences === null ? null : (
              <JobProgress job={job} outcome={outcome} />
            )}
            <JobPhase job={job} events={tailEvents ?? []} />
            <dl className="grid grid-cols-2 gap-4 text-sm sm:grid-cols-4">
              <div>
                <dt className="text-xs text-fg-subtle">Created</dt>
                <dd className="mt-0.5 text-fg">
                  <RelativeTime iso={job.created_at} />
                </dd>
              </div>
              <div>
                <dt className="text-xs text-fg-subtle">Started</dt>
                <dd className="mt-0.5 text-fg">{job.started_at ? formatDateTime(job.started_at, 'UTC') : '—'}</dd>
              </div>
              <div>
                <dt className="text-xs text-fg-subtle">Finished</dt>
                <dd className="mt-0.5 text-fg">{job.finished_at ? formatDateTime(job.finished_at, 'UTC') : '—'}</dd>
              </div>
              <div>
                <dt className="text-xs text-fg-subtle">Duration</dt>
                <dd className="mt-0.5 text-fg tabular-nums" data-testid="job-duration">
                  <JobDuration job={job} />
                </dd>
              </div>
              <div>
                <dt className="text-xs text-fg-subtle">Trained from</dt>
                {/* No step: the base model's weights (start_from 'base', or every checkpoint was deleted). */}
                <dd className="mt-0.5 text-fg tabular-nums" data-testid="job-base-step">
                  {job.base_step === null ? 'Base model' : `Step ${job.base_step}`}
                </dd>
              </div>
              <div>
                <dt className="text-xs text-fg-subtle">New checkpoint</dt>
                <dd className="mt-0.5 flex flex-wrap items-baseline gap-x-2 text-fg tabular-nums">
                  <span data-testid="job-new-step">{job.step ?? '—'}</span>
                  {/* What a person does next with a finished job: talk to what it trained. */}
                  {job.status === 'COMPLETED' && job.step !== null && model.data ? (
                    <Link
                      href={playgroundHref(model.data, job.step)}
                      className="text-sm text-accent-text hover:underline"
                      data-testid="job-chat-link"
                    >
                      Open in the playground
                    </Link>
                  ) : null}
                </dd>
              </div>
            </dl>
          </CardBody>
        </Card>

        <section aria-labelledby="job-charts-title" className="flex flex-col gap-4">
          <div className="flex flex-wrap items-end justify-between gap-3">
            <h2 id="job-charts-title" className="text-[15px] font-semibold text-fg">
              Gradient steps
            </h2>
            {charts.length > 0 ? (
              <ChartControls
                smoothing={smoothing}
                onSmoothingChange={setSmoothing}
                logScale={logScale}
                onLogScaleChange={setLogScale}
              />
            ) : null}
          </div>
          <ConstantsRow constants={constants} />
          {charts.length + constants.length === 0 ? (
            <Card>
              <EmptyState
                title={terminal ? 'No gradient steps' : 'No gradient steps yet'}
                description={
                  terminal ? 'This job finished without an optimizer step.' : 'Loss appears here as the job trains.'
                }
              />
            </Card>
          ) : (
            <div className="grid gap-4 lg:grid-cols-2" data-testid="job-charts">
              {charts.map((chart) => (
                <MetricChartCard
                  key={chart.metric}
                  chart={chart}
                  smoothing={effectiveSmoothing(chart, smoothing)}
                  logScale={logScale}
                  filePrefix={`job-${job.id.slice(0, 8)}`}
                  xLabel="Gradient step"
                />
              ))}
            </div>
          )}
        </section>

        <Card aria-labelledby="job-events-title">
          <CardHeader
            id="job-events-title"
            title="Events"
            description={
              newestFirst
                ? `Newest first, as the trainer reported them${terminal ? '' : '; new events appear on top'}.`
                : 'Chronological, as the trainer reported them.'
            }
            actions={
              <SegmentedControl
                label="Event order"
                size="sm"
                value={newestFirst ? 'newest' : 'oldest'}
                options={[
                  { value: 'oldest', label: 'Oldest first' },
                  { value: 'newest', label: 'Newest first' },
                ]}
                onChange={(value) => setEventView({ ...eventView, newestFirst: value === 'newest' })}
                data-testid="events-order"
              />
            }
          />
          <div className="flex items-center gap-2 border-b border-line px-5 py-2.5">
            <label htmlFor="event-type" className="text-xs font-medium text-fg-muted">
              Type
            </label>
            <Select
              id="event-type"
              value={eventView.type ?? ''}
              onChange={(e) =>
                setEventView({
                  ...eventView,
                  type: e.target.value === '' ? null : (e.target.value as JobEventDto['type']),
                })
              }
              className="w-48"
              data-testid="event-type-filter"
            >
              <option value="">All types</option>
              {EVENT_TYPES.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </Select>
          </div>
          {page.isPending ? (
            <div className="p-5">
              <Skeleton className="h-5 w-2/3" />
            </div>
          ) : page.isError ? (
            <CardBody>
              <RetryAlert title="Could not load events" onRetry={() => page.refetch()}>
                {page.error.message}
              </RetryAlert>
            </CardBody>
          ) : events.length === 0 ? (
            eventView.type ? (
              <EmptyState title={`No ${eventView.type} events`} description="Choose All types to see every event." />
            ) : (
              <EmptyState
                title="No events yet"
                description={
                  job.status === 'RUNNING'
                    ? 'A worker took the job and is loading the base model; training_started comes once it has.'
                    : 'The job reports training_started when a worker picks it up.'
                }
              />
            )
          ) : (
            <JobEventsTable
              events={events}
              firstIndex={newestFirst || eventView.type ? undefined : (pageNumber(cursors) - 1) * EVENT_PAGE_SIZE + 1}
            />
          )}
          <CursorPager
            cursors={cursors}
            setCursors={setCursors}
            nextCursor={page.data?.has_more ? page.data.last_id : null}
            testId="events"
          />
        </Card>

        <Card aria-labelledby="job-config-title">
          <CardHeader
            id="job-config-title"
            title="Configuration"
            description="As resolved when the job was accepted."
          />
          <CardBody>
            <JobConfig config={job.config} />
          </CardBody>
        </Card>
      </div>

      <ConfirmDialog
        open={confirmCancel}
        title="Cancel this job?"
        description="The job stops and ends as cancelled. No checkpoint is written; the model keeps the checkpoints it has. Its events stay readable."
        confirmLabel="Cancel job"
        // Two buttons that both say "Cancel" ask the user to guess which one stops the job.
        dismissLabel="Keep running"
        pending={cancel.isPending}
        error={cancel.error?.message ?? null}
        onConfirm={() => cancel.mutate(undefined, { onSuccess: () => setConfirmCancel(false) })}
        onCancel={() => setConfirmCancel(false)}
      />
    </>
  );
}
