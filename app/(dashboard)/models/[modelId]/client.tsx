'use client';

import { useDeleteModel } from '@/lib/client/queries/mutations';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import dynamic from 'next/dynamic';
import Link from 'next/link';
import { Breadcrumb } from '@/components/ui/breadcrumb';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { TrainingCurveSection } from '@/components/models/training-curve';
import { JobsSection } from '@/components/models/jobs-section';
import { MetricsSection } from '@/components/models/metrics-section';
import { RunOverview } from '@/components/models/run-overview';
import { DeleteModelDialog } from '@/components/models/delete-model-dialog';
import { InferenceNamesList } from '@/components/models/inference-names-list';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Badge } from '@/components/ui/badge';
import { Button, buttonClassName } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { cx } from '@/components/ui/cx';
import { SparklesIcon, TrashIcon } from '@/components/ui/icons';
import { Skeleton } from '@/components/ui/skeleton';
import { useModelLive } from '@/lib/client/hooks/use-model-live';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import { inferenceNames, playgroundHref } from '@/lib/client/chat/inference-names';
import { modelJobsInfiniteQuery } from '@/lib/client/queries/jobs';
import { modelQuery } from '@/lib/client/queries/models';
import { modelTinkerQuery } from '@/lib/client/queries/tinker';
import { useQueryStates } from 'nuqs';
import { modelSearchParsers, type ModelTab } from './search-params';
// Its own chunk: the overview is what most visits open, and the model page is the heaviest route (bench:ui).
const TrajectoriesTab = dynamic(() => import('./trajectories-tab').then((m) => m.TrajectoriesTab), {
  loading: () => <Skeleton className="h-64 w-full" />,
});
// Only a Tinker training client's page draws it, after hydration like the charts: its tables stay out of every model
// page's first load (bench:ui, ≤ 250 kB), a Tinker one's included. The data is in the page's cache by then.
const TinkerClientCard = dynamic(
  () => import('@/components/tinker/tinker-client-card').then((m) => m.TinkerClientCard),
  { ssr: false, loading: () => <Skeleton className="h-[26rem] w-full" /> },
);
// Below the curve and the charts, out of the first screen: after hydration, which keeps the model page within its
// first-load budget (bench:ui, ≤ 250 kB) with the honest-headline rules (issue 41) added to the summary strip.
const CheckpointsSection = dynamic(
  () => import('@/components/models/checkpoints-section').then((m) => m.CheckpointsSection),
  { ssr: false, loading: () => <Skeleton className="h-64 w-full" /> },
);
// Blind A/B votes are few models' (the card draws nothing without them), at the bottom of the page: after hydration
// too, which keeps the model page within its first-load budget (bench:ui) with the Tinker views added.
const AbVotesCard = dynamic(() => import('@/components/models/ab-votes-card').then((m) => m.AbVotesCard), {
  ssr: false,
});

// Eval runs and the auto-eval setting (issue 41): after hydration, below the fold, out of the page's first load
// (bench:ui, ≤ 250 kB); its setting form is a chunk of its own again, loaded when opened.
const ModelEvalsCard = dynamic(() => import('@/components/evals/model-evals-card').then((m) => m.ModelEvalsCard), {
  ssr: false,
  loading: () => <Skeleton className="h-40 w-full" />,
});

// Draws only when the base model cannot be served (downloading from the Hub, a vLLM server down): after hydration.
const BaseModelNotice = dynamic(() => import('@/components/models/base-model-notice').then((m) => m.BaseModelNotice), {
  ssr: false,
});

interface ModelDetailClientProps {
  modelId: string;
  entity: string;
  defaultEntity: string;
}

export function ModelDetailClient({ modelId, entity, defaultEntity }: ModelDetailClientProps) {
  const router = useRouter();
  const model = useQuery(modelQuery(modelId));
  // The model's Tinker training client (null: it is not one); kept live by useModelLive.
  const tinkerQuery = useQuery(modelTinkerQuery(modelId));
  const tinker = tinkerQuery.data ?? null;
  // The run overview's query (one request for both): a model trained only by SFT jobs reads its run on the
  // per-gradient-step curve, which then comes first; the per-checkpoint charts have one mean point per job there.
  const jobs = useInfiniteQuery(modelJobsInfiniteQuery(modelId));
  const jobRows = jobs.data?.pages.flatMap((p) => p.data) ?? [];
  const curveFirst = tinker !== null || (jobRows.length > 0 && jobRows.every((j) => j.type === 'sft'));
  // The tab state lives in the URL (shareable, kept on reload), through the parsers the server page uses too.
  const [{ tab, step, split, compare }, setUrlState] = useQueryStates(modelSearchParsers, { history: 'replace' });
  const setTab = (next: ModelTab) => void setUrlState({ tab: next });
  const setSplit = (next: string) => void setUrlState({ split: next });
  const [deleting, setDeleting] = useState(false);
  useModelLive(modelId);

  const deleteModel = useDeleteModel(modelId);

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

  /** `compareWith`: the step the tab's side-by-side comparison starts from (else the one before `atStep`). */
  function openTrajectories(atStep: number | null, atSplit?: string, compareWith?: number) {
    void setUrlState({
      step: atStep,
      compare: compareWith ?? null,
      ...(atSplit !== undefined ? { split: atSplit } : {}),
    });
    setTab('trajectories');
    window.scrollTo({ top: 0 });
  }
  const fineTuneHrefFor = (step: number) =>
    hrefWithEntity(`/sft/new?model=${encodeURIComponent(m.id)}&from=${step}`, entity, defaultEntity);

  return (
    <>
      <Breadcrumb
        items={[
          { label: 'Models', href: hrefWithEntity('/models', entity, defaultEntity) },
          { label: `${m.entity}/${m.project}`, className: 'font-mono text-xs text-fg-subtle' },
        ]}
      />
      <div className="mb-6 flex flex-wrap items-start justify-between gap-4">
        <div className="min-w-0">
          <h1 className="text-2xl font-semibold tracking-tight break-all text-fg" data-testid="model-name">
            {m.name}
          </h1>
          <p className="mt-1 flex flex-wrap items-center gap-2 text-sm text-fg-muted">
            <Badge>{m.project}</Badge>
            {tinker ? (
              <Badge tone="info">
                <span data-testid="model-tinker-badge">Tinker training client</span>
              </Badge>
            ) : null}
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
          {tinker ? null : <BaseModelNotice baseModel={m.base_model} />}
          <RunOverview
            model={m}
            entity={entity}
            defaultEntity={defaultEntity}
            onOpenTrajectories={openTrajectories}
            tinker={tinker}
          />
          {tinker ? (
            <TinkerClientCard
              tinker={tinker}
              checkpointHref={(s) => `#checkpoint-${s}`}
              playgroundHref={(s) => playgroundHref(m, s)}
            />
          ) : null}
          {/* A training client's run is its training curve (a point per optim step); its checkpoints' metrics are
              copies of the step before each sampler save, so they come second. So for SFT-only models: their
              checkpoints hold one mean per job, the curve every gradient step. */}
          {curveFirst ? null : <MetricsSection model={m} onRewardStepClick={(s, sp) => openTrajectories(s, sp)} />}
          <TrainingCurveSection
            model={m}
            jobHrefFor={(id) => hrefWithEntity(`/jobs/${id}`, entity, defaultEntity)}
            playgroundHrefFor={(s) => playgroundHref(m, s)}
            fineTuneHrefFor={fineTuneHrefFor}
            tinker={tinker}
          />
          {curveFirst ? (
            <MetricsSection model={m} onRewardStepClick={(s, sp) => openTrajectories(s, sp)} tinker={tinker !== null} />
          ) : null}
          <CheckpointsSection model={m} fineTuneHrefFor={fineTuneHrefFor} />
          <ModelEvalsCard model={m} />
          <AbVotesCard modelId={m.id} />
          <JobsSection model={m} entity={entity} defaultEntity={defaultEntity} tinker={tinker !== null} />
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
            compare={compare}
            onStepChange={(next) => void setUrlState({ step: next, compare: null })}
            onSplitChange={setSplit}
            onCompareChange={(next) => void setUrlState({ compare: next })}
          />
        </div>
      )}

      <DeleteModelDialog
        open={deleting}
        name={m.name}
        checkpointCount={m.checkpoint_count}
        pending={deleteModel.isPending}
        error={deleteModel.error?.message ?? null}
        onConfirm={() =>
          deleteModel.mutate(undefined, {
            onSuccess: () => router.push(hrefWithEntity('/models', entity, defaultEntity)),
          })
        }
        onCancel={() => {
          deleteModel.reset();
          setDeleting(false);
        }}
      />
    </>
  );
}
