'use client';

import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { StepCompare } from '@/components/trajectories/step-compare';
import { StepList } from '@/components/trajectories/step-list';
import { TrajectoryCard } from '@/components/trajectories/trajectory-card';
import { Alert } from '@/components/ui/alert';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Card, CardFooter } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { Input, Select } from '@/components/ui/input';
import { Skeleton } from '@/components/ui/skeleton';
import { trajectoriesInfiniteQuery, trajectoryStepsInfiniteQuery } from '@/lib/client/queries/trajectories';
import { rewardsTie } from '@/lib/client/runs/rl-guardrails';
import { isTypingTarget } from '@/lib/client/navigation/shortcuts';
import {
  bestAndWorst,
  filterByReward,
  formatNumber,
  groupExceptions,
  groupTrajectories,
  parseRewardBound,
  sortByReward,
  type DisplayTrajectory,
  type RewardSort,
} from '@/lib/client/format/trajectory-view';

interface TrajectoriesTabProps {
  modelId: string;
  /** null = the latest step with logged metrics. */
  step: number | null;
  split: string;
  onStepChange: (step: number | null) => void;
  onSplitChange: (split: string) => void;
  /** The step compared with `step` side by side (the URL's `?compare=`); null = the step before it. */
  compare: number | null;
  onCompareChange: (step: number) => void;
}

/**
 * J and K move the focus to the next and previous trajectory row (its summary, so Enter or Space opens it), as in
 * mail readers; only while nobody is typing and no dialog is open (the keys of lib/client/navigation/shortcuts.ts).
 */
function useRowKeys(container: React.RefObject<HTMLDivElement | null>) {
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.isComposing || event.ctrlKey || event.metaKey || event.altKey) return;
      const key = event.key.toLowerCase();
      if (key !== 'j' && key !== 'k') return;
      if (isTypingTarget(event.target) || document.querySelector('dialog[open]') || !container.current) return;
      const rows = [...container.current.querySelectorAll<HTMLElement>('[data-testid="trajectory"] > summary')];
      if (rows.length === 0) return;
      const current = rows.findIndex((row) => row === document.activeElement);
      const next =
        current === -1
          ? key === 'j'
            ? 0
            : rows.length - 1
          : Math.min(rows.length - 1, Math.max(0, current + (key === 'j' ? 1 : -1)));
      event.preventDefault();
      rows[next].focus();
      rows[next].scrollIntoView({ block: 'nearest' });
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, [container]);
}

export function TrajectoriesTab({
  modelId,
  step,
  split,
  onStepChange,
  onSplitChange,
  compare,
  onCompareChange,
}: TrajectoriesTabProps) {
  const stepPages = useInfiniteQuery(trajectoryStepsInfiniteQuery(modelId));
  const stepList = useMemo(() => stepPages.data?.pages.flatMap((p) => p.data) ?? [], [stepPages.data]);
  const steps = useMemo(() => stepList.map((s) => s.step), [stepList]);
  const splits = useMemo(
    () => [...new Set(stepList.flatMap((s) => s.splits.map((sp) => sp.split)))].sort(),
    [stepList],
  );
  const effectiveStep = step ?? steps[0] ?? null;

  const container = useRef<HTMLDivElement>(null);
  useRowKeys(container);
  const [sort, setSort] = useState<RewardSort>('reward-desc');
  const [minText, setMinText] = useState('');
  const [maxText, setMaxText] = useState('');
  const groups = useInfiniteQuery({
    ...trajectoriesInfiniteQuery(modelId, { step: effectiveStep, split }),
    placeholderData: keepPreviousData,
    // Without a step in the URL, the newest step with trajectories is shown: wait to know it.
    enabled: step !== null || !stepPages.isPending,
  });
  const list = useMemo(() => groups.data?.pages.flatMap((p) => p.data) ?? [], [groups.data]);

  // Best and worst across every loaded group of the step: the extremes a person compares first.
  const all: (DisplayTrajectory & { where: string })[] = useMemo(
    () =>
      list.flatMap((g) =>
        groupTrajectories(g.group).map((t) => ({
          ...t,
          where: `${g.split} · group ${g.group_index + 1} · #${t.index + 1}`,
        })),
      ),
    [list],
  );
  const extremes = bestAndWorst(all);
  const tie = rewardsTie(all);
  const rewardRange = extremes ? { min: extremes.worst.reward, max: extremes.best.reward } : undefined;
  const minBound = parseRewardBound(minText);
  const maxBound = parseRewardBound(maxText);
  const rangeError =
    minBound.value !== null && maxBound.value !== null && minBound.value > maxBound.value
      ? 'The lower bound is above the upper bound: nothing can match'
      : null;
  // An invalid bound filters nothing rather than everything; its message says why.
  const min = minBound.value;
  const max = maxBound.value;
  const filterError = minBound.error ?? maxBound.error ?? rangeError;

  if (stepPages.isSuccess && stepList.length === 0 && step === null && !split) {
    return (
      <Card>
        <EmptyState
          title="No trajectories yet"
          description="Groups appear here, step by step, when a client logs them (POST …/log) or sends them with an RL job (POST /v1/preview/training-jobs)."
        />
      </Card>
    );
  }

  return (
    <div ref={container} className="grid gap-6 lg:grid-cols-[13rem_minmax(0,1fr)]">
      <div className="hidden lg:block">
        {stepPages.isPending ? (
          <Skeleton className="h-64 w-full" />
        ) : stepPages.isError ? (
          <RetryAlert title="Could not load the steps" onRetry={() => stepPages.refetch()}>
            {stepPages.error.message}
          </RetryAlert>
        ) : (
          <StepList
            steps={stepList}
            selected={effectiveStep}
            split={split}
            onSelect={onStepChange}
            hasMore={stepPages.hasNextPage}
            loadingMore={stepPages.isFetchingNextPage}
            onLoadMore={() => stepPages.fetchNextPage()}
          />
        )}
      </div>
      <div className="flex min-w-0 flex-col gap-6">
        <div className="flex flex-wrap items-end gap-3" role="group" aria-label="Trajectory filters">
          <div>
            <label htmlFor="trajectory-step" className="mb-1 block text-xs font-medium text-fg-muted">
              Step
            </label>
            <Select
              id="trajectory-step"
              value={effectiveStep === null ? '' : String(effectiveStep)}
              onChange={(e) => onStepChange(e.target.value === '' ? null : Number(e.target.value))}
              className="w-32"
              data-testid="trajectory-step"
            >
              {effectiveStep !== null && !steps.includes(effectiveStep) ? (
                <option value={effectiveStep}>{effectiveStep}</option>
              ) : null}
              {steps.length === 0 ? <option value="">All</option> : null}
              {steps.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </Select>
          </div>
          <div>
            <label htmlFor="trajectory-split" className="mb-1 block text-xs font-medium text-fg-muted">
              Split
            </label>
            <Select
              id="trajectory-split"
              value={split}
              onChange={(e) => onSplitChange(e.target.value)}
              className="w-32"
              data-testid="trajectory-split"
            >
              <option value="">All splits</option>
              {split && !splits.includes(split) ? <option value={split}>{split}</option> : null}
              {splits.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </Select>
          </div>
          <div>
            <label htmlFor="trajectory-sort" className="mb-1 block text-xs font-medium text-fg-muted">
              Sort
            </label>
            <Select
              id="trajectory-sort"
              value={sort}
              onChange={(e) => setSort(e.target.value as RewardSort)}
              className="w-40"
              data-testid="trajectory-sort"
            >
              <option value="reward-desc">Highest reward</option>
              <option value="reward-asc">Lowest reward</option>
              <option value="index">As logged</option>
            </Select>
          </div>
          <div className="flex items-end gap-2">
            <div>
              <label htmlFor="trajectory-min" className="mb-1 block text-xs font-medium text-fg-muted">
                Reward ≥
              </label>
              <div className="w-24">
                <Input
                  id="trajectory-min"
                  inputMode="decimal"
                  value={minText}
                  onChange={(e) => setMinText(e.target.value)}
                  aria-invalid={minBound.error || rangeError ? true : undefined}
                  aria-describedby={filterError ? 'trajectory-filter-error' : undefined}
                  data-testid="trajectory-min-reward"
                />
              </div>
            </div>
            <div>
              <label htmlFor="trajectory-max" className="mb-1 block text-xs font-medium text-fg-muted">
                Reward ≤
              </label>
              <div className="w-24">
                <Input
                  id="trajectory-max"
                  inputMode="decimal"
                  value={maxText}
                  onChange={(e) => setMaxText(e.target.value)}
                  aria-invalid={maxBound.error || rangeError ? true : undefined}
                  aria-describedby={filterError ? 'trajectory-filter-error' : undefined}
                  data-testid="trajectory-max-reward"
                />
              </div>
            </div>
          </div>
          {filterError ? (
            <p
              id="trajectory-filter-error"
              role="status"
              className="basis-full text-xs text-danger-text"
              data-testid="trajectory-filter-error"
            >
              {filterError}
            </p>
          ) : null}
        </div>

        {groups.isPending ? (
          <div className="space-y-3" aria-busy="true" aria-label="Loading trajectories">
            <Skeleton className="h-40 w-full" />
          </div>
        ) : groups.isError ? (
          <RetryAlert title="Could not load trajectories" onRetry={() => groups.refetch()}>
            {groups.error.message}
          </RetryAlert>
        ) : list.length === 0 ? (
          <Card>
            <EmptyState
              title={effectiveStep === null ? 'No trajectories yet' : `No trajectories at step ${effectiveStep}`}
              description={
                steps.length > 0
                  ? 'Pick a step from the list, or clear the split filter.'
                  : 'Groups appear when a client logs them (POST …/log) or sends them to an RL job.'
              }
            />
          </Card>
        ) : (
          <>
            {tie ? (
              <Alert tone="info" title={`All ${all.length} trajectories at step ${effectiveStep} have the same reward`}>
                <span data-testid="rewards-tie">
                  Every reward is {formatNumber(all[0].reward)}: there is no best or worst to compare, and a group
                  without a reward spread teaches an RL step nothing.
                </span>
              </Alert>
            ) : extremes && all.length > 1 ? (
              <section aria-labelledby="extremes-title">
                <h2 id="extremes-title" className="mb-3 text-[15px] font-semibold text-fg">
                  Best and worst at step {effectiveStep}
                </h2>
                <div className="grid gap-4 lg:grid-cols-2" data-testid="best-worst">
                  <TrajectoryCard trajectory={extremes.best} label={extremes.best.where} tone="best" />
                  <TrajectoryCard trajectory={extremes.worst} label={extremes.worst.where} tone="worst" />
                </div>
              </section>
            ) : null}
            {effectiveStep !== null && steps.length > 1 ? (
              <StepCompare
                modelId={modelId}
                step={effectiveStep}
                split={split}
                steps={steps}
                trajectories={all}
                compareWith={compare}
                onCompareWithChange={onCompareChange}
              />
            ) : null}
            <section aria-labelledby="groups-title" className="flex flex-col gap-4">
              <h2 id="groups-title" className="text-[15px] font-semibold text-fg">
                Groups
              </h2>
              {list.map((g) => {
                const trajectories = sortByReward(filterByReward(groupTrajectories(g.group), min, max), sort);
                const exceptions = groupExceptions(g.group);
                return (
                  <Card
                    key={g.id}
                    data-testid="trajectory-group"
                    aria-label={`Group ${g.group_index + 1} of ${g.split} at step ${g.step}`}
                  >
                    <div className="flex flex-wrap items-center gap-2 border-b border-line px-5 py-3 text-sm">
                      <span className="font-medium text-fg">Group {g.group_index + 1}</span>
                      <Badge tone={g.split === 'val' ? 'warning' : 'accent'}>{g.split}</Badge>
                      <Badge>{g.source === 'train' ? 'trained' : 'logged'}</Badge>
                      <span className="text-fg-muted">step {g.step}</span>
                      <span className="ml-auto font-mono text-xs text-fg-muted tabular-nums">
                        {g.num_trajectories} trajector{g.num_trajectories === 1 ? 'y' : 'ies'} · reward mean{' '}
                        {g.reward_mean === null ? '—' : formatNumber(g.reward_mean)} · min{' '}
                        {g.reward_min === null ? '—' : formatNumber(g.reward_min)} · max{' '}
                        {g.reward_max === null ? '—' : formatNumber(g.reward_max)}
                      </span>
                    </div>
                    <div className="space-y-2 p-4">
                      {exceptions.length > 0 ? (
                        <Alert
                          tone="warning"
                          title={`${exceptions.length} exception${exceptions.length === 1 ? '' : 's'}`}
                        >
                          <pre className="font-mono text-xs break-words whitespace-pre-wrap">
                            {exceptions.join('\n\n')}
                          </pre>
                        </Alert>
                      ) : null}
                      {trajectories.length === 0 ? (
                        <p className="text-sm text-fg-subtle">No trajectory in this group matches the reward filter.</p>
                      ) : (
                        trajectories.map((t) => (
                          <TrajectoryCard
                            key={t.index}
                            trajectory={t}
                            label={`#${t.index + 1}`}
                            collapsible
                            rewardRange={rewardRange}
                          />
                        ))
                      )}
                    </div>
                  </Card>
                );
              })}
              {groups.hasNextPage ? (
                <CardFooter className="justify-center rounded-xl border border-line">
                  <Button
                    variant="secondary"
                    onClick={() => groups.fetchNextPage()}
                    pending={groups.isFetchingNextPage}
                    data-testid="trajectories-load-more"
                  >
                    Load more groups
                  </Button>
                </CardFooter>
              ) : null}
            </section>
          </>
        )}
      </div>
    </div>
  );
}
