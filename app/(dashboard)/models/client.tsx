'use client';

import { useCreateModel } from '@/lib/client/queries/mutations';
import { keepPreviousData, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { debounce, useQueryStates } from 'nuqs';
import { useRouter, useSearchParams } from 'next/navigation';
import { useState } from 'react';
import { CreateModelDialog } from '@/components/models/create-model-dialog';
import { ModelFilters } from '@/components/models/model-filters';
import { ModelSearch } from '@/components/models/model-search';
import { ModelTable, ModelTableSkeleton } from '@/components/models/model-table';
import { ModelsEmptyState, NoSearchResults } from '@/components/models/models-empty-state';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Button, buttonClassName } from '@/components/ui/button';
import { Card, CardFooter } from '@/components/ui/card';
import { SparklesIcon } from '@/components/ui/icons';
import { PlusIcon } from '@/components/ui/icons';
import { PageHeader } from '@/components/ui/page-header';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import { baseModelsQuery, modelsInfiniteQuery, projectsQuery } from '@/lib/client/queries/models';
import { useDebouncedValue } from '@/lib/client/hooks/use-debounced-value';
import { COMPARE_MAX_MODELS, COMPARE_MIN_MODELS } from '@/lib/schemas/comparison';
import { modelsSearchParsers } from './search-params';

interface ModelsClientProps {
  entity: string;
  defaultEntity: string;
  origin: string;
  exampleBaseModel: string;
}

export function ModelsClient({ entity, defaultEntity, origin, exampleBaseModel }: ModelsClientProps) {
  const router = useRouter();
  // Search and filters live in the URL (shareable, kept on reload; history replaced, no server round trip). The
  // search box updates the URL 250 ms after the last key, and the list follows the same pause.
  const [{ search: searchInput, project, base_model: baseModel }, setFilters] = useQueryStates(modelsSearchParsers, {
    history: 'replace',
  });
  const setSearchInput = (value: string) =>
    void setFilters({ search: value || null }, { limitUrlUpdates: debounce(250) });
  const setProject = (value: string) => void setFilters({ project: value || null });
  const setBaseModel = (value: string) => void setFilters({ base_model: value || null });
  const [creating, setCreating] = useState(false);
  // Models ticked for run comparison, in the order ticked (the order the comparison draws them in).
  const [picked, setPicked] = useState<string[]>([]);
  const togglePicked = (id: string) =>
    setPicked((ids) => (ids.includes(id) ? ids.filter((x) => x !== id) : [...ids, id]));
  // Links keep `?entity=` exactly as the URL has it (absent for the personal entity).
  const entityParam = useSearchParams().get('entity');
  const entityHref = (path: string) => (entityParam ? `${path}?entity=${encodeURIComponent(entityParam)}` : path);
  const search = useDebouncedValue(searchInput.trim(), 250);
  const filtered = search !== '' || project !== '' || baseModel !== '';

  const projects = useQuery(projectsQuery(entity));
  const baseModels = useQuery(baseModelsQuery());
  const projectNames = (projects.data?.data ?? []).filter((p) => p.entity === entity).map((p) => p.name);

  const create = useCreateModel();

  const models = useInfiniteQuery({
    ...modelsInfiniteQuery({ entity, search, project, baseModel }),
    // While a new search loads, the previous results stay on screen instead of a skeleton.
    placeholderData: keepPreviousData,
  });

  const rows = models.data?.pages.flatMap((page) => page.data) ?? [];

  const openCreate = () => setCreating(true);

  let body;
  if (models.isPending) {
    body = (
      <Card>
        <ModelTableSkeleton />
      </Card>
    );
  } else if (models.isError && rows.length === 0) {
    body = (
      <RetryAlert title="Could not load models" onRetry={() => models.refetch()}>
        {models.error.message}
      </RetryAlert>
    );
  } else if (rows.length === 0 && !filtered) {
    body = <ModelsEmptyState entity={entity} origin={origin} baseModel={exampleBaseModel} onCreate={openCreate} />;
  } else if (rows.length === 0) {
    body = (
      <Card>
        <NoSearchResults
          search={search}
          filtered={project !== '' || baseModel !== ''}
          onClear={() => {
            setSearchInput('');
            setProject('');
            setBaseModel('');
          }}
        />
      </Card>
    );
  } else {
    body = (
      <Card aria-busy={models.isPlaceholderData || undefined}>
        <ModelTable
          models={rows}
          hrefFor={(model) => hrefWithEntity(`/models/${model.id}`, entity, defaultEntity)}
          selected={new Set(picked)}
          onToggle={(model) => togglePicked(model.id)}
        />
        {models.hasNextPage || models.isFetchNextPageError ? (
          <CardFooter className="justify-center">
            {models.isFetchNextPageError ? (
              <p role="alert" className="mr-auto text-sm text-danger-text">
                {models.error?.message}
              </p>
            ) : null}
            <Button
              variant="secondary"
              onClick={() => models.fetchNextPage()}
              pending={models.isFetchingNextPage}
              data-testid="models-load-more"
            >
              {models.isFetchNextPageError ? 'Retry' : 'Load more'}
            </Button>
          </CardFooter>
        ) : null}
      </Card>
    );
  }

  const showToolbar = rows.length > 0 || filtered || searchInput !== '';

  return (
    <>
      <PageHeader
        title="Models"
        description={
          <>
            Fine-tuned models in <span className="font-medium text-fg">{entity}</span>, newest first.
          </>
        }
        actions={
          <>
            {rows.length > 0 ? (
              <Link
                href={entityHref('/sft/new')}
                className={buttonClassName({ variant: 'secondary' })}
                data-testid="models-fine-tune"
              >
                <SparklesIcon className="size-4" />
                Fine-tune
              </Link>
            ) : null}
            <Button onClick={openCreate} data-testid="new-model">
              <PlusIcon className="size-4" />
              New model
            </Button>
          </>
        }
      />
      {showToolbar ? (
        <div className="mb-4 flex flex-wrap items-center justify-between gap-3">
          <div className="flex w-full flex-col gap-2 md:w-auto md:flex-row md:items-center">
            {/* A fixed width beside the filters; ModelSearch itself is full-width for the stacked mobile layout. */}
            <div className="md:w-64">
              <ModelSearch
                value={searchInput}
                onChange={setSearchInput}
                busy={models.isFetching && !models.isFetchingNextPage}
              />
            </div>
            <ModelFilters
              projects={projectNames}
              baseModels={baseModels.data?.data ?? []}
              project={project}
              baseModel={baseModel}
              onProjectChange={setProject}
              onBaseModelChange={setBaseModel}
            />
          </div>
          <div className="flex flex-wrap items-center gap-2">
            {project !== '' && rows.length >= COMPARE_MIN_MODELS ? (
              <Link
                href={hrefWithEntity(`/compare?project=${encodeURIComponent(project)}`, entity, defaultEntity)}
                className={buttonClassName({ variant: 'secondary', size: 'sm' })}
                data-testid="compare-project"
              >
                Compare project
              </Link>
            ) : null}
            {picked.length >= COMPARE_MIN_MODELS && picked.length <= COMPARE_MAX_MODELS ? (
              <Link
                href={`/compare?models=${picked.join(',')}`}
                className={buttonClassName({ variant: 'primary', size: 'sm' })}
                data-testid="compare-selected"
              >
                Compare {picked.length}
              </Link>
            ) : (
              <span className="text-xs text-fg-subtle" data-testid="compare-hint">
                {picked.length > COMPARE_MAX_MODELS
                  ? `${picked.length} ticked: compare at most ${COMPARE_MAX_MODELS}`
                  : `Tick ${COMPARE_MIN_MODELS}–${COMPARE_MAX_MODELS} models to compare`}
              </span>
            )}
          </div>
          <p className="text-sm text-fg-subtle" aria-live="polite">
            {rows.length > 0
              ? `${rows.length}${models.hasNextPage ? '+' : ''} model${rows.length === 1 && !models.hasNextPage ? '' : 's'}`
              : null}
          </p>
        </div>
      ) : null}
      {body}
      <CreateModelDialog
        open={creating}
        entity={entity}
        projects={projectNames}
        baseModels={baseModels.data?.data ?? []}
        onSubmit={async (body) => {
          const model = await create.mutateAsync(body);
          setCreating(false);
          router.push(hrefWithEntity(`/models/${model.id}`, entity, defaultEntity));
        }}
        onClose={() => setCreating(false)}
      />
    </>
  );
}
