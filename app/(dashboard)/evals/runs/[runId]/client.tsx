'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { Breadcrumb } from '@/components/ui/breadcrumb';
import { useQueryStates } from 'nuqs';
import { useEffect, useMemo, useRef, useState } from 'react';
import { MetricChartCard } from '@/components/charts/metric-chart-card';
import { CancelRunButton } from '@/components/evals/eval-runs-table';
import { EvalProgress, EvalStatusBadge } from '@/components/evals/eval-status';
import { ResultsTable } from '@/components/evals/results-table';
import { SummaryTable } from '@/components/evals/summary-table';
import { Alert } from '@/components/ui/alert';
import { Card, CardHeader } from '@/components/ui/card';
import { CursorPager } from '@/components/ui/cursor-pager';
import { EmptyState } from '@/components/ui/empty-state';
import { Select } from '@/components/ui/input';

import { RetryAlert } from '@/components/ui/retry-alert';
import { SegmentedControl } from '@/components/ui/segmented-control';
import { Skeleton } from '@/components/ui/skeleton';
import { isApiClientError } from '@/lib/client/api/api-fetch';
import { currentCursor, FIRST_PAGE, type CursorStack } from '@/lib/client/navigation/cursor-stack';
import { evalKeys, evalResultsQuery, evalRunQuery, RESULTS_PAGE_SIZE } from '@/lib/client/queries/evals';
import {
  defaultPair,
  isActiveRun,
  resultsQuery,
  scoreChart,
  scorerNames,
  targetLabel,
  type ResultFilter,
} from '@/lib/client/evals/evals';
import { evalRunSearchParsers } from './search-params';

const FILTER_OPTIONS: { value: ResultFilter; label: string }[] = [
  { value: 'all', label: 'All' },
  { value: 'regressed', label: 'Regressed' },
  { value: 'improved', label: 'Improved' },
  { value: 'changed', label: 'Changed' },
];

const FILTER_HINTS: Record<ResultFilter, string> = {
  all: 'Every example.',
  regressed: 'Passed at A, failed at B.',
  improved: 'Failed at A, passed at B.',
  changed: 'Passed at one of A and B, failed at the other.',
};

export function EvalRunClient({ runId }: { runId: string }) {
  const queryClient = useQueryClient();
  const run = useQuery(evalRunQuery(runId));
  const [url, setUrl] = useQueryStates(evalRunSearchParsers, { history: 'replace' });

  const data = run.data;
  const pair = useMemo(() => (data ? defaultPair(data.targets) : null), [data]);
  const names = useMemo(() => data?.targets.map((t) => t.name) ?? [], [data]);
  // A pair from the address that names no target of this run falls back to the default (the API would refuse it).
  const a = url.a && names.includes(url.a) ? url.a : (pair?.[0] ?? null);
  const b = url.b && names.includes(url.b) ? url.b : (pair?.[1] ?? null);
  const filter = a && b && a !== b ? url.filter : 'all';

  // Previous/next over the forward-only cursor; the address holds the current page's cursor.
  const [cursors, setCursors] = useState<CursorStack>(() => (url.after ? [undefined, url.after] : FIRST_PAGE));
  const after = currentCursor(cursors) ?? null;
  useEffect(() => {
    void setUrl({ after });
  }, [after, setUrl]);

  const live = data ? isActiveRun(data.status) : false;
  const query = resultsQuery({ limit: RESULTS_PAGE_SIZE, after, filter, a, b });
  const results = useQuery({ ...evalResultsQuery(runId, query, live), enabled: Boolean(data) });

  // When the run ends, its rows are final: refetch them once (the live refresh stops with it).
  const lastStatus = useRef(data?.status);
  useEffect(() => {
    if (lastStatus.current && data && lastStatus.current !== data.status && !isActiveRun(data.status))
      void queryClient.invalidateQueries({ queryKey: [...evalKeys.run(runId), 'results'] });
    lastStatus.current = data?.status;
  }, [data, queryClient, runId]);

  const chart = useMemo(() => (data ? scoreChart(data) : null), [data]);
  const scorers = useMemo(() => (data ? scorerNames(data) : []), [data]);
  // Judges' verdicts and clients' comments open on demand (a client's scorer is stored with type `client`).
  const verdictScorers = useMemo(
    () =>
      new Set(
        scorers.filter((name) => {
          const stored = data?.scorers.find((c) => (c.name ?? c.type) === name);
          return !stored || stored.type === 'judge' || stored.type === 'client';
        }),
      ),
    [data, scorers],
  );
  const columns = useMemo(() => {
    const first = a && b && a !== b ? [a, b] : [];
    return [...new Set([...first, ...names])];
  }, [a, b, names]);

  function setPair(next: { a?: string; b?: string; filter?: ResultFilter }) {
    setCursors(FIRST_PAGE);
    void setUrl({ ...next, after: null });
  }

  if (run.isPending)
    return (
      <div aria-busy="true" aria-label="Loading the eval run" className="space-y-4">
        <Skeleton className="h-8 w-64" />
        <Skeleton className="h-40 w-full" />
      </div>
    );
  if (run.isError)
    return isApiClientError(run.error) && run.error.status === 404 ? (
      <Card>
        <EmptyState title="No such eval run" description="It was deleted, or it belongs to an entity you are not in.">
          <Link href="/evals" className="font-medium text-accent-text hover:underline">
            Go to Evals
          </Link>
        </EmptyState>
      </Card>
    ) : (
      <RetryAlert title="Could not load this eval run" onRetry={() => run.refetch()}>
        {run.error.message}
      </RetryAlert>
    );

  const r = run.data;
  const title = r.name || (r.eval_set ? `${r.eval_set.name} v${r.eval_set.version}` : 'Eval run');
  // The step first: a narrow select cuts the end of its label, and the steps are what tells two checkpoints apart.
  const pairOptions = r.targets.map((t) => (
    <option key={t.name} value={t.name}>
      {t.step != null ? `Step ${t.step} · ${targetLabel(t.name).replace(/ · step \d+$/, '')}` : targetLabel(t.name)}
    </option>
  ));

  return (
    <>
      <Breadcrumb
        items={[
          { label: 'Evals', href: '/evals' },
          { label: 'Run', className: 'truncate' },
        ]}
      />
      <div className="mb-6 flex flex-wrap items-start justify-between gap-4">
        <div className="min-w-0">
          <h1 className="text-2xl font-semibold tracking-tight break-all text-fg" data-testid="eval-run-title">
            {title}
          </h1>
          <p className="mt-1 flex flex-wrap items-center gap-x-2 gap-y-1 text-sm text-fg-muted">
            <EvalStatusBadge status={r.status} />
            {r.eval_set ? (
              <Link href={`/evals?set=${encodeURIComponent(r.eval_set_id)}`} className="hover:text-fg hover:underline">
                {r.eval_set.project}/{r.eval_set.name} v{r.eval_set.version}
              </Link>
            ) : null}
            <span aria-hidden="true">·</span>
            <span>
              {r.n} sample{r.n === 1 ? '' : 's'} per example
              {typeof r.sampling?.temperature === 'number' ? ` at temperature ${r.sampling.temperature}` : ''}
            </span>
          </p>
        </div>
        {isActiveRun(r.status) ? <CancelRunButton runId={r.id} size="md" /> : null}
      </div>

      <div className="flex flex-col gap-6">
        {r.status !== 'COMPLETED' ? (
          <Card className="px-5 py-4">
            <p className="mb-2 text-sm font-medium text-fg">Samples scored</p>
            <EvalProgress run={r} />
          </Card>
        ) : null}
        {r.status === 'FAILED' ? (
          <Alert tone="danger" title="The run failed">
            {r.error ?? 'No reason was given.'}
          </Alert>
        ) : null}

        {chart?.chart ? (
          <section aria-label="Score per checkpoint" className="flex flex-col gap-2">
            <MetricChartCard
              chart={chart.chart}
              smoothing={0}
              logScale={false}
              filePrefix={`eval-${title}`}
              xLabel="Step"
            />
            {chart.offChart.length ? (
              <p className="text-xs text-fg-subtle">
                Not on the step axis (no checkpoint step): {chart.offChart.join(', ')}. Their scores are in the table.
              </p>
            ) : null}
          </section>
        ) : null}

        <Card aria-labelledby="eval-summary-title">
          <CardHeader
            id="eval-summary-title"
            title="Summary"
            description="Mean score per target and scorer; a sample passes at a score of 0.5 or more."
          />
          {r.summary.length ? (
            <SummaryTable run={r} />
          ) : (
            <p className="px-5 py-4 text-sm text-fg-muted">Scores appear as targets answer.</p>
          )}
        </Card>

        <Card aria-labelledby="eval-results-title">
          <CardHeader
            id="eval-results-title"
            title="Examples"
            description={FILTER_HINTS[filter]}
            actions={
              <SegmentedControl
                label="Show examples"
                size="sm"
                value={filter}
                options={r.targets.length >= 2 ? FILTER_OPTIONS : FILTER_OPTIONS.slice(0, 1)}
                onChange={(value) => setPair({ filter: value })}
                data-testid="eval-filter"
              />
            }
          />
          {r.targets.length >= 2 ? (
            <div className="flex flex-wrap items-center gap-3 border-b border-line px-5 py-3 text-sm">
              {(['a', 'b'] as const).map((side) => (
                <label key={side} className="flex max-w-full min-w-0 items-center gap-2">
                  <span className="font-medium text-fg">{side.toUpperCase()}</span>
                  <Select
                    value={(side === 'a' ? a : b) ?? ''}
                    onChange={(e) => setPair(side === 'a' ? { a: e.target.value } : { b: e.target.value })}
                    className="w-[min(20rem,100%)]"
                    aria-label={`Target ${side.toUpperCase()}`}
                    data-testid={`eval-target-${side}`}
                  >
                    {pairOptions}
                  </Select>
                </label>
              ))}
              {a === b ? (
                <span className="text-xs text-warning-text">Pick two different targets to filter.</span>
              ) : null}
            </div>
          ) : null}
          {results.isError ? (
            <div className="p-4">
              <RetryAlert title="Could not load the results" onRetry={() => results.refetch()}>
                {results.error.message}
              </RetryAlert>
            </div>
          ) : !results.data ? (
            <div className="p-4">
              <Skeleton className="h-40 w-full" />
            </div>
          ) : results.data.data.length === 0 ? (
            <p className="px-5 py-6 text-center text-sm text-fg-muted" data-testid="eval-results-empty">
              {filter === 'all'
                ? live
                  ? 'No example has been answered yet.'
                  : 'This run has no results.'
                : `No example ${filter === 'changed' ? 'changed' : filter} between A and B.`}
            </p>
          ) : (
            <ResultsTable
              rows={results.data.data}
              targets={columns}
              scorers={scorers}
              verdictScorers={verdictScorers}
              pair={a && b && a !== b ? [a, b] : names.slice(0, 2)}
              roles={a && b && a !== b ? { [a]: 'A', [b]: 'B' } : {}}
            />
          )}
          <CursorPager
            cursors={cursors}
            setCursors={setCursors}
            nextCursor={results.data?.next ?? null}
            testId="eval-results"
          />
        </Card>
      </div>
    </>
  );
}
