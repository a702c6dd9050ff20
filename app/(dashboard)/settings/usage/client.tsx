'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import dynamic from 'next/dynamic';
import Link from 'next/link';
import { useQueryStates } from 'nuqs';
import { useMemo } from 'react';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Badge } from '@/components/ui/badge';
import { buttonClassName } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { BarChartIcon } from '@/components/ui/icons';
import { SegmentedControl } from '@/components/ui/segmented-control';
import { Skeleton } from '@/components/ui/skeleton';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { USAGE_DAY_OPTIONS, usageQuery } from '@/lib/client/queries/usage';
import { useNow } from '@/lib/client/hooks/use-now';
import { formatCount, usageChartData, usageTable, usageTotals, type UsageGroupBy } from '@/lib/client/charts/usage';
import { usageSearchParsers } from './search-params';

// recharts is large and only this tab needs it: it loads when the chart first renders, in the browser only.
const UsageChart = dynamic(() => import('@/components/usage/usage-chart'), {
  ssr: false,
  loading: () => <Skeleton className="h-72 w-full" />,
});

const DAY_OPTIONS = USAGE_DAY_OPTIONS.map((days) => ({ value: String(days), label: `${days} days` }));
const GROUP_OPTIONS = [
  { value: 'model', label: 'By model' },
  { value: 'project', label: 'By project' },
] as const;

interface UsageClientProps {
  entity: string;
}

function Stat({ label, value, testId }: { label: string; value: number; testId: string }) {
  return (
    <div className="rounded-xl border border-line bg-surface px-5 py-4 shadow-xs dark:shadow-none">
      <dt className="text-sm text-fg-muted">{label}</dt>
      <dd className="mt-1 text-2xl font-semibold tracking-tight text-fg tabular-nums" data-testid={testId}>
        {formatCount(value)}
      </dd>
    </div>
  );
}

export function UsageClient({ entity }: UsageClientProps) {
  // The choices live in the URL, so that a link shows the same view (history replaced, no server round trip).
  const [{ days, group }, setView] = useQueryStates(usageSearchParsers, { history: 'replace' });
  const setDays = (next: number) => void setView({ days: next as (typeof USAGE_DAY_OPTIONS)[number] });
  const setGroup = (next: UsageGroupBy) => void setView({ group: next });
  const usage = useQuery({ ...usageQuery(entity, days), placeholderData: keepPreviousData });
  const now = useNow();

  const rows = useMemo(() => usage.data?.data ?? [], [usage.data]);
  const totals = useMemo(() => usageTotals(rows), [rows]);
  const table = useMemo(() => usageTable(rows), [rows]);
  // The window ends today in UTC, the server's day boundary; null until mounted (the chart is browser-only).
  const today = now === null ? null : new Date(now).toISOString().slice(0, 10);
  const chart = useMemo(
    () => (today ? usageChartData(rows, { today, days, groupBy: group }) : null),
    [rows, today, days, group],
  );

  const toolbar = (
    <div className="flex flex-wrap items-center gap-2">
      <SegmentedControl
        label="Group tokens"
        size="sm"
        value={group}
        options={GROUP_OPTIONS}
        onChange={setGroup}
        data-testid="usage-group"
      />
      <SegmentedControl
        label="Period"
        size="sm"
        value={String(days)}
        options={DAY_OPTIONS}
        onChange={(value) => setDays(Number(value))}
        data-testid="usage-days"
      />
    </div>
  );

  if (usage.isPending) {
    return (
      <div className="flex flex-col gap-4" aria-busy="true" aria-label="Loading usage">
        <Skeleton className="h-24 w-full" />
        <Skeleton className="h-72 w-full" />
      </div>
    );
  }

  if (usage.isError && rows.length === 0) {
    return (
      <RetryAlert title="Could not load usage" onRetry={() => usage.refetch()}>
        {usage.error.message}
      </RetryAlert>
    );
  }

  return (
    <div className="flex flex-col gap-6" aria-busy={usage.isPlaceholderData || undefined}>
      <dl className="grid gap-4 sm:grid-cols-3">
        <Stat label="Requests" value={totals.requests} testId="usage-total-requests" />
        <Stat label="Prompt tokens" value={totals.prompt_tokens} testId="usage-total-prompt" />
        <Stat label="Completion tokens" value={totals.completion_tokens} testId="usage-total-completion" />
      </dl>

      <Card aria-labelledby="usage-chart-title">
        <CardHeader
          id="usage-chart-title"
          title="Tokens per day"
          description={
            <>
              Prompt and completion tokens of chat requests billed to{' '}
              <span className="font-medium text-fg">{entity}</span>, by UTC day.
            </>
          }
          actions={toolbar}
        />
        <CardBody>
          {rows.length === 0 ? (
            <EmptyState
              className="py-8"
              icon={<BarChartIcon className="size-5" />}
              title={`No chat requests in the last ${days} days`}
              description="Requests to /v1/chat/completions, from the playground or an API key, show up here."
            >
              <Link href="/playground" className={buttonClassName({ variant: 'secondary' })}>
                Open the playground
              </Link>
            </EmptyState>
          ) : chart ? (
            <UsageChart data={chart} />
          ) : (
            <Skeleton className="h-72 w-full" />
          )}
        </CardBody>
      </Card>

      {rows.length > 0 ? (
        <Card aria-labelledby="usage-table-title">
          <CardHeader
            id="usage-table-title"
            title="By project and model"
            description={`The last ${days} days, most tokens first. Requests without a project header count as “inference”.`}
          />
          <Table data-testid="usage-table">
            <caption className="sr-only">Usage by project and model</caption>
            <thead>
              <tr>
                <Th>Project</Th>
                <Th>Model</Th>
                <Th className="text-right">Requests</Th>
                <Th className="text-right">Prompt tokens</Th>
                <Th className="text-right">Completion tokens</Th>
                <Th className="text-right">Total</Th>
              </tr>
            </thead>
            <tbody>
              {table.map((row) => (
                <Tr key={`${row.project}\u0000${row.model}`} data-testid="usage-row">
                  <Td>
                    <Badge>{row.project}</Badge>
                  </Td>
                  <Td className="font-mono text-xs break-all text-fg">{row.model}</Td>
                  <Td className="text-right tabular-nums">{formatCount(row.requests)}</Td>
                  <Td className="text-right text-fg-muted tabular-nums">{formatCount(row.prompt_tokens)}</Td>
                  <Td className="text-right text-fg-muted tabular-nums">{formatCount(row.completion_tokens)}</Td>
                  <Td className="text-right font-medium tabular-nums">{formatCount(row.total_tokens)}</Td>
                </Tr>
              ))}
            </tbody>
          </Table>
        </Card>
      ) : null}
    </div>
  );
}
