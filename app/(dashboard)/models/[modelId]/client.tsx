'use client';

import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import dynamic from 'next/dynamic';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useEffect, useMemo, useState } from 'react';
import { ChartControls } from '@/components/charts/metric-charts-panel';
import { ConstantsRow } from '@/components/charts/constants-row';
import { MetricChartCard, preloadMetricChart } from '@/components/charts/metric-chart-card';
import { ModelJobsTable } from '@/components/jobs/model-jobs-table';
import { AbVotesCard } from '@/components/models/ab-votes-card';
import { CheckpointTable } from '@/components/models/checkpoint-table';
import { TrainingCurveSection } from '@/components/models/training-curve';
import { RewardHackingCard, RunSummaryStrip } from '@/components/models/run-summary';
import { DeleteModelDialog } from '@/components/models/delete-model-dialog';
import { InferenceNamesList } from '@/components/models/inference-names-list';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Badge } from '@/components/ui/badge';
import { Button, buttonClassName } from '@/components/ui/button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/card';
import { CursorPager } from '@/components/ui/cursor-pager';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { cx } from '@/components/ui/cx';
import { EmptyState } from '@/components/ui/empty-state';
import { ChevronRightIcon, SparklesIcon, TrashIcon } from '@/components/ui/icons';
import { Select } from '@/components/ui/input';
import { Skeleton } from '@/components/ui/skeleton';
import { apiFetch } from '@/lib/client/api-fetch';
import {
  checkpointMetricKeys,
  defaultBestMetric,
  metricDirection,
  selectBestCheckpoint,
  type MetricDirection,
} from '@/lib/client/best-checkpoint';
import { groupSeriesIntoCharts, type ChartSpec } from '@/lib/client/chart-series';
import { effectiveSmoothing, MIN_POINTS_TO_SMOOTH, sectionCharts } from '@/lib/client/chart-sections';
import { isTerminalStatus } from '@/lib/client/poll-backoff';
import { detectRewardHacking, jobOutcome, runVerdict } from '@/lib/client/rl-guardrails';
import { useModelLive } from '@/lib/client/use-model-live';
import { currentCursor, FIRST_PAGE, popCursor, type CursorStack } from '@/lib/client/cursor-stack';
import { hrefWithEntity } from '@/lib/client/entity';
import { checkpointNames, inferenceNames, modelBaseName, playgroundHref, stepName } from '@/lib/client/inference-names';
import {
  allCheckpointsQuery,
  checkpointPageQuery,
  historyQuery,
  modelJobsInfiniteQuery,
  modelQuery,
  queryKeys,
} from '@/lib/client/query-keys';
import { deleteCheckpointsResponseSchema, type CheckpointDto } from '@/lib/schemas/checkpoints';
import { deleteModelResponseSchema, type ModelSummaryDto } from '@/lib/schemas/models';
import { useQueryStates } from 'nuqs';
import { modelSearchParsers, type ModelTab } from './search-params';
// Its own chunk: the overview is what most visits open, and the model page is the heaviest route (bench:ui).
const TrajectoriesTab = dynamic(() => import('./trajectories-tab').then((m) => m.TrajectoriesTab), {
  loading: () => <Skeleton className="h-64 w-full" />,
});

interface ModelDetailClientProps {
  modelId: string;
  entity: string;
  defaultEntity: string;
}

export function ModelDetailClient({ modelId, entity, defaultEntity }: ModelDetailClientProps) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const model = useQuery(modelQuery(modelId));
  // The tab state lives in the URL (shareable, kept on reload), through the parsers the server page uses too.
  const [{ tab, step, split }, setUrlState] = useQueryStates(modelSearchParsers, { history: 'replace' });
  const setTab = (next: ModelTab) => void setUrlState({ tab: next });
  const setStep = (next: number | null) => void setUrlState({ step: next });
  const setSplit = (next: string) => void setUrlState({ split: next });
  const [deleting, setDeleting] = useState(false);
  useModelLive(modelId);

  const deleteModel = useMutation({
    mutationFn: () => apiFetch(`/v1/preview/models/${modelId}`, deleteModelResponseSchema, { method: 'DELETE' }),
    onSuccess: async () => {
      queryClient.removeQueries({ queryKey: queryKeys.model.all(modelId) });
      await queryClient.invalidateQueries({ queryKey: queryKeys.models.lists() });
      router.push(hrefWithEntity('/models', entity, defaultEntity));
    },
  });

  if (model.isPending) {
    return (
      <div aria-busy="true" aria-label="Loading model" className="space-y-4">
        <Skeleton className="h-8 w-64" />
        <Skeleton className="h-40 w-full" />
      </div>
    );
  }
  if (model.isError) {
    return (
      <RetryAlert title="Could not load this model" onRetry={() => model.refetch()}>
        {model.error.message}
      </RetryAlert>
    );
  }
  const m = model.data;

  function openTrajectories(atStep: number | null, atSplit?: string) {
    setStep(atStep);
    if (atSplit !== undefined) setSplit(atSplit);
    setTab('trajectories');
    window.scrollTo({ top: 0 });
  }
  const fineTuneHrefFor = (step: number) =>
    hrefWithEntity(`/sft/new?model=${encodeURIComponent(m.id)}&from=${step}`, entity, defaultEntity);

  return (
    <>
      <nav aria-label="Breadcrumb" className="mb-3 text-sm text-fg-muted">
        <ol className="flex items-center gap-1.5">
          <li>
            <Link href={hrefWithEntity('/models', entity, defaultEntity)} className="hover:text-fg hover:underline">
              Models
            </Link>
          </li>
          <li aria-hidden="true">
            <ChevronRightIcon className="size-3.5" />
          </li>
          <li className="font-mono text-xs text-fg-subtle">
            {m.entity}/{m.project}
          </li>
        </ol>
      </nav>
      <div className="mb-6 flex flex-wrap items-start justify-between gap-4">
        <div className="min-w-0">
          <h1 className="text-2xl font-semibold tracking-tight break-all text-fg" data-testid="model-name">
            {m.name}
          </h1>
          <p className="mt-1 flex flex-wrap items-center gap-2 text-sm text-fg-muted">
            <Badge>{m.project}</Badge>
            <span>
              from <span className="font-mono text-xs text-fg">{m.base_model}</span>
            </span>
            <span aria-hidden="true">·</span>
            <span data-testid="model-latest-step">
              {m.latest_step === null ? 'No checkpoints' : `Latest step ${m.latest_step.toLocaleString('en')}`}
            </span>
          </p>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          <Button variant="danger-ghost" onClick={() => setDeleting(true)} data-testid="delete-model">
            <TrashIcon className="size-4" />
            Delete model
          </Button>
          {/* The next step after creating a model: train it on a dataset, with this model preselected. */}
          <Link
            href={hrefWithEntity(`/sft/new?model=${encodeURIComponent(m.id)}`, entity, defaultEntity)}
            className={buttonClassName()}
            data-testid="model-fine-tune"
          >
            <SparklesIcon className="size-4" />
            Fine-tune
          </Link>
        </div>
      </div>

      <div role="tablist" aria-label="Model sections" className="mb-6 flex gap-1 border-b border-line">
        {(['overview', 'trajectories'] as const).map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            id={`tab-${t}`}
            aria-selected={tab === t}
            // Only the selected tab's panel is rendered; pointing at a missing id is an ARIA error.
            aria-controls={tab === t ? `panel-${t}` : undefined}
            onClick={() => setTab(t)}
            className={cx(
              '-mb-px border-b-2 px-3 py-2 text-sm font-medium capitalize transition-colors',
              tab === t ? 'border-accent text-fg' : 'border-transparent text-fg-muted hover:text-fg',
            )}
          >
            {t}
          </button>
        ))}
      </div>

      {tab === 'overview' ? (
        <div role="tabpanel" id="panel-overview" aria-labelledby="tab-overview" className="flex flex-col gap-6">
          <RunOverview
            model={m}
            entity={entity}
            defaultEntity={defaultEntity}
            onOpenTrajectories={(s, sp) => openTrajectories(s, sp)}
          />
          <MetricsSection model={m} onRewardStepClick={(s, sp) => openTrajectories(s, sp)} />
          <TrainingCurveSection
            model={m}
            jobHrefFor={(id) => hrefWithEntity(`/jobs/${id}`, entity, defaultEntity)}
            playgroundHrefFor={(s) => playgroundHref(m, s)}
            fineTuneHrefFor={fineTuneHrefFor}
          />
          <CheckpointsSection model={m} fineTuneHrefFor={fineTuneHrefFor} />
          <AbVotesCard modelId={m.id} />
          <JobsSection model={m} entity={entity} defaultEntity={defaultEntity} />
          <Card aria-labelledby="names-title">
            <CardHeader
              id="names-title"
              title="Use this model"
              description={
                <>
                  Send one of these names as <code className="font-mono text-[13px]">model</code> to
                  /v1/chat/completions.
                </>
              }
            />
            <CardBody>
              <InferenceNamesList names={inferenceNames(m, m.latest_step)} />
            </CardBody>
          </Card>
        </div>
      ) : (
        <div role="tabpanel" id="panel-trajectories" aria-labelledby="tab-trajectories">
          <TrajectoriesTab
            modelId={modelId}
            step={step}
            split={split}
            onStepChange={setStep}
            onSplitChange={setSplit}
          />
        </div>
      )}

      <DeleteModelDialog
        open={deleting}
        name={m.name}
        checkpointCount={m.checkpoint_count}
        pending={deleteModel.isPending}
        error={deleteModel.error?.message ?? null}
        onConfirm={() => deleteModel.mutate()}
        onCancel={() => {
          deleteModel.reset();
          setDeleting(false);
        }}
      />
    </>
  );
}

/** The splits of a chart that have a point at `step`: where a click on that step can have landed. */
function splitsAt(chart: ChartSpec, step: number): string[] {
  return chart.series.filter((s) => s.points.some((p) => p.step === step && p.value !== null)).map((s) => s.split);
}

function RunOverview({
  model,
  entity,
  defaultEntity,
  onOpenTrajectories,
}: {
  model: ModelSummaryDto;
  entity: string;
  defaultEntity: string;
  onOpenTrajectories: (step: number, split: string) => void;
}) {
  const history = useQuery(historyQuery(model.id));
  const all = useQuery(allCheckpointsQuery(model.id));
  const jobs = useInfiniteQuery(modelJobsInfiniteQuery(model.id));
  const series = useMemo(() => history.data?.series ?? [], [history.data]);
  const signals = useMemo(() => detectRewardHacking(series), [series]);
  const checkpoints = all.data?.data;
  const metricsByStep = useMemo(() => new Map((checkpoints ?? []).map((c) => [c.step, c.metrics])), [checkpoints]);
  const rows = jobs.data?.pages.flatMap((p) => p.data) ?? [];
  const job = rows.find((j) => !isTerminalStatus(j.status)) ?? rows[0] ?? null;
  const outcomeOf = (j: (typeof rows)[number]) => jobOutcome(j, j.step === null ? null : metricsByStep.get(j.step));
  const newestRl = rows.find((j) => j.type === 'rl' && isTerminalStatus(j.status));
  const verdict = runVerdict(series, newestRl ? outcomeOf(newestRl) : null, signals);
  const keys = checkpointMetricKeys(checkpoints ?? []);
  const metric = defaultBestMetric(keys);
  const direction = metric ? metricDirection(metric) : 'max';
  const bestCheckpoint = metric && checkpoints ? selectBestCheckpoint(checkpoints, metric, direction) : null;

  return (
    <>
      <RunSummaryStrip
        verdict={verdict}
        best={bestCheckpoint && metric ? { checkpoint: bestCheckpoint, metric, direction } : null}
        series={series}
        job={job}
        jobOutcome={job ? outcomeOf(job) : undefined}
        jobHref={(j) => hrefWithEntity(`/jobs/${j.id}`, entity, defaultEntity)}
      />
      <RewardHackingCard signals={signals} onOpenTrajectories={onOpenTrajectories} />
    </>
  );
}

function MetricsSection({
  model,
  onRewardStepClick,
}: {
  model: ModelSummaryDto;
  onRewardStepClick: (step: number, split: string | undefined) => void;
}) {
  const history = useQuery(historyQuery(model.id));
  useEffect(preloadMetricChart, []);
  const [smoothing, setSmoothing] = useState(0.6);
  const [logScale, setLogScale] = useState(false);
  const charts = useMemo(() => groupSeriesIntoCharts(history.data?.series ?? [], history.data?.bands), [history.data]);
  const sections = useMemo(() => sectionCharts(charts), [charts]);

  function clickReward(chart: ChartSpec, step: number, nearest: string | undefined) {
    // The split of the point clicked, so that a val point opens val trajectories, never "All splits": the series
    // drawn nearest the pointer, else the only split with a point at that step.
    const candidates = splitsAt(chart, step);
    const split = nearest !== undefined && candidates.includes(nearest) ? nearest : candidates[0];
    onRewardStepClick(step, split);
  }

  return (
    <section aria-labelledby="metrics-title" className="flex flex-col gap-4">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h2 id="metrics-title" className="text-[15px] font-semibold text-fg">
            Metrics
          </h2>
          <p className="mt-0.5 text-sm text-fg-muted">
            Every logged {'{split}/{metric}'} of the run, by step. Drag the handles under a chart to zoom. Series of
            fewer than {MIN_POINTS_TO_SMOOTH} points are drawn unsmoothed.
          </p>
        </div>
        {charts.length > 0 ? (
          <ChartControls
            smoothing={smoothing}
            onSmoothingChange={setSmoothing}
            logScale={logScale}
            onLogScaleChange={setLogScale}
          />
        ) : null}
      </div>
      {history.isPending ? (
        <div className="grid gap-4 lg:grid-cols-2">
          <Skeleton className="h-72" />
          <Skeleton className="h-72" />
        </div>
      ) : history.isError ? (
        <RetryAlert title="Could not load the metric history" onRetry={() => history.refetch()}>
          {history.error.message}
        </RetryAlert>
      ) : charts.length === 0 ? (
        <Card>
          <EmptyState
            title="No metrics yet"
            description="Each training job adds a point per metric when it finishes: fine-tune this model with the Fine-tune button above, or log trajectories and train from a client (POST …/log, POST /v1/preview/training-jobs)."
          />
        </Card>
      ) : (
        <div className="flex flex-col gap-6" data-testid="metric-charts">
          {sections.map((section) => (
            <section
              key={section.id}
              aria-labelledby={`metrics-${section.id}`}
              className="flex flex-col gap-3"
              data-testid={`metric-section-${section.id}`}
            >
              <div>
                <h3 id={`metrics-${section.id}`} className="text-sm font-semibold text-fg">
                  {section.title}
                </h3>
                <p className="text-xs text-fg-muted">{section.description}</p>
              </div>
              <ConstantsRow constants={section.constants} />
              {section.charts.length > 0 ? (
                <div className="grid gap-4 lg:grid-cols-2">
                  {section.charts.map((chart) => (
                    <MetricChartCard
                      key={chart.metric}
                      chart={chart}
                      smoothing={effectiveSmoothing(chart, smoothing)}
                      logScale={logScale}
                      filePrefix={model.name}
                      modelId={model.id}
                      onStepClick={
                        chart.metric === 'reward' ? (step, near) => clickReward(chart, step, near) : undefined
                      }
                      stepClickHint={chart.metric === 'reward' ? 'Click a point to see its trajectories' : undefined}
                    />
                  ))}
                </div>
              ) : null}
            </section>
          ))}
        </div>
      )}
    </section>
  );
}

// Three metric columns beside step, age and actions fit a laptop-wide card: more would push the row actions out of view.
const MAX_METRIC_COLUMNS = 3;

function CheckpointsSection({
  model,
  fineTuneHrefFor,
}: {
  model: ModelSummaryDto;
  fineTuneHrefFor: (step: number) => string;
}) {
  const queryClient = useQueryClient();
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
  const best = metric && all.data ? selectBestCheckpoint(all.data.data, metric, dir) : null;
  const columns = metric ? [metric, ...keys.filter((k) => k !== metric)].slice(0, MAX_METRIC_COLUMNS) : [];

  const remove = useMutation({
    mutationFn: (c: CheckpointDto) =>
      apiFetch(`/v1/preview/models/${model.id}/checkpoints`, deleteCheckpointsResponseSchema, {
        method: 'DELETE',
        json: { steps: [c.step] },
      }),
    onSuccess: async () => {
      // Deleting the only row of a later page would leave it empty: step back instead of showing nothing.
      if (rows.length === 1) setCursors(popCursor);
      await queryClient.invalidateQueries({ queryKey: queryKeys.model.all(model.id) });
      await queryClient.invalidateQueries({ queryKey: queryKeys.models.lists() });
      setToDelete(null);
    },
  });

  const rows = page.data?.data ?? [];

  return (
    <Card aria-labelledby="checkpoints-title">
      <CardHeader
        id="checkpoints-title"
        title="Checkpoints"
        description={
          <>
            {`${model.checkpoint_count.toLocaleString('en')} checkpoint${model.checkpoint_count === 1 ? '' : 's'}, newest step first.`}
            {keys.length > 0 && !metric ? (
              <span className="mt-1 block" data-testid="best-hint">
                No best checkpoint: there is no validation metric to rank by (train metrics reward memorising and reward
                hacking). Log a val split with POST …/log, or pick a metric under “Best by”.
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
        onConfirm={() => toDelete && remove.mutate(toDelete)}
        onCancel={() => setToDelete(null)}
      />
    </Card>
  );
}

function JobsSection({
  model,
  entity,
  defaultEntity,
}: {
  model: ModelSummaryDto;
  entity: string;
  defaultEntity: string;
}) {
  const jobs = useInfiniteQuery(modelJobsInfiniteQuery(model.id));
  const rows = jobs.data?.pages.flatMap((p) => p.data) ?? [];
  const all = useQuery(allCheckpointsQuery(model.id));
  const metricsByStep = useMemo(() => new Map((all.data?.data ?? []).map((c) => [c.step, c.metrics])), [all.data]);
  // Live updates come from useModelLive, which polls this list with the rest of the page.

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
        <ModelJobsTable
          jobs={rows}
          hrefFor={(job) => hrefWithEntity(`/jobs/${job.id}`, entity, defaultEntity)}
          outcomeFor={(job) => jobOutcome(job, job.step === null ? null : metricsByStep.get(job.step))}
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
