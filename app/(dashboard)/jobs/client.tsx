'use client';

import { useQuery } from '@tanstack/react-query';
import { parseAsString, parseAsStringLiteral, useQueryStates } from 'nuqs';
import { useState } from 'react';
import { entityJobColumns, entityJobOutcome } from '@/components/jobs/entity-job-columns';
import { JobsTable } from '@/components/jobs/jobs-table';
import { TinkerClientsSection } from '@/components/tinker/tinker-clients-section';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { CursorPager } from '@/components/ui/cursor-pager';
import { EmptyState } from '@/components/ui/empty-state';
import { PageHeader } from '@/components/ui/page-header';
import { RetryAlert } from '@/components/ui/retry-alert';
import { SegmentedControl } from '@/components/ui/segmented-control';
import { currentCursor, FIRST_PAGE, type CursorStack } from '@/lib/client/navigation/cursor-stack';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import { entityJobsQuery } from '@/lib/client/queries/jobs';
import { modelPickerQuery, projectsQuery } from '@/lib/client/queries/models';
import { tinkerClientsQuery } from '@/lib/client/queries/tinker';
import { useDebouncedValue } from '@/lib/client/hooks/use-debounced-value';
import { Input, Select } from '@/components/ui/input';
import type { EntityJobDto } from '@/lib/schemas/training-jobs';

const STATUSES = ['ALL', 'QUEUED', 'RUNNING', 'COMPLETED', 'FAILED'] as const;
const STATUS_OPTIONS: { value: (typeof STATUSES)[number]; label: string }[] = [
  { value: 'ALL', label: 'All' },
  { value: 'RUNNING', label: 'Running' },
  { value: 'QUEUED', label: 'Queued' },
  { value: 'COMPLETED', label: 'Completed' },
  { value: 'FAILED', label: 'Failed or cancelled' },
];

/**
 * The history's filters live in the URL (`?status=&kind=&project=&model=&q=`), so a filtered list can be shared and
 * survives a reload; the server filters (GET /v1/preview/training-jobs), so paging stays exact.
 */
const jobFilterParsers = {
  status: parseAsStringLiteral(STATUSES).withDefault('ALL'),
  kind: parseAsStringLiteral(['rl', 'sft'] as const),
  project: parseAsString,
  model: parseAsString,
  q: parseAsString.withDefault(''),
};

export function JobsClient({
  entity,
  defaultEntity,
  origin,
}: {
  entity: string;
  defaultEntity: string;
  origin: string;
}) {
  const [filters, setFilters] = useQueryStates(jobFilterParsers, { history: 'replace' });
  const { status } = filters;
  // The search box answers as the user types, but asks the server once they pause.
  const [searchText, setSearchText] = useState(filters.q);
  const search = useDebouncedValue(searchText, 300);
  const [cursors, setCursors] = useState<CursorStack>(FIRST_PAGE);
  const [lastSearch, setLastSearch] = useState(search);
  if (lastSearch !== search) {
    // A new search starts from the first page, and is kept in the URL.
    setLastSearch(search);
    setCursors(FIRST_PAGE);
    void setFilters({ q: search || null });
  }
  const setFilter = (next: Partial<typeof filters>) => {
    void setFilters(next);
    setCursors(FIRST_PAGE);
  };
  const projects = useQuery(projectsQuery(entity));
  const models = useQuery(modelPickerQuery(entity));
  const active = useQuery(entityJobsQuery(entity, { kind: 'active' }));
  const history = useQuery(
    entityJobsQuery(entity, {
      kind: 'page',
      status: status === 'ALL' ? null : status,
      cursor: currentCursor(cursors) ?? null,
      jobKind: filters.kind,
      project: filters.project,
      modelId: filters.model,
      search,
    }),
  );
  const filtered = status !== 'ALL' || Boolean(filters.kind || filters.project || filters.model || search.trim());
  const activeJobs = active.data?.data ?? [];
  const jobHref = (job: EntityJobDto) => hrefWithEntity(`/jobs/${job.id}`, entity, defaultEntity);
  const modelHref = (job: EntityJobDto) => hrefWithEntity(`/models/${job.model.id}`, entity, defaultEntity);
  const columns = entityJobColumns(jobHref, modelHref);
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
            <JobsTable
              jobs={activeJobs}
              columns={columns}
              outcomeFor={entityJobOutcome}
              caption="Running and queued jobs"
              testId="entity-jobs-table"
              rowTestId="entity-job-row"
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
                onChange={(value) => setFilter({ status: value })}
                data-testid="jobs-status-filter"
              />
            }
          />
          <div className="flex flex-wrap items-center gap-2 border-b border-line px-4 pb-3" data-testid="jobs-filters">
            <Input
              type="search"
              aria-label="Search jobs"
              placeholder="Search model, project or job id"
              className="w-full sm:w-64"
              value={searchText}
              onChange={(e) => setSearchText(e.target.value)}
              data-testid="jobs-search"
            />
            <Select
              aria-label="Kind"
              className="w-auto"
              value={filters.kind ?? ''}
              onChange={(e) => setFilter({ kind: (e.target.value || null) as 'rl' | 'sft' | null })}
              data-testid="jobs-kind-filter"
            >
              <option value="">All kinds</option>
              <option value="sft">SFT</option>
              <option value="rl">RL</option>
            </Select>
            <Select
              aria-label="Project"
              className="w-auto max-w-48"
              value={filters.project ?? ''}
              onChange={(e) => setFilter({ project: e.target.value || null })}
              data-testid="jobs-project-filter"
            >
              <option value="">All projects</option>
              {(projects.data?.data ?? []).map((p) => (
                <option key={p.name} value={p.name}>
                  {p.name}
                </option>
              ))}
            </Select>
            <Select
              aria-label="Model"
              className="w-auto max-w-56"
              value={filters.model ?? ''}
              onChange={(e) => setFilter({ model: e.target.value || null })}
              data-testid="jobs-model-filter"
            >
              <option value="">All models</option>
              {(models.data?.data ?? [])
                .filter((m) => !filters.project || m.project === filters.project)
                .map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.project}/{m.name}
                  </option>
                ))}
            </Select>
          </div>
          {history.isError ? (
            <CardBody>
              <RetryAlert title="Could not load the jobs" onRetry={() => void history.refetch()} />
            </CardBody>
          ) : history.data && history.data.data.length === 0 ? (
            <CardBody>
              <EmptyState
                title={filtered ? 'No job matches these filters' : 'No training job yet'}
                description={
                  filtered
                    ? 'Clear a filter or the search to see other jobs.'
                    : 'Fine-tune a model from the form, or start SFT and RL jobs through the API; they are listed here.'
                }
              />
            </CardBody>
          ) : (
            <JobsTable
              jobs={history.data?.data ?? []}
              columns={columns}
              outcomeFor={entityJobOutcome}
              caption="All jobs, newest first"
              testId="entity-jobs-table"
              rowTestId="entity-job-row"
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
