'use client';

import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ModelSearch } from '@/components/models/model-search';
import { ModelTable, ModelTableSkeleton } from '@/components/models/model-table';
import { ModelsEmptyState, NoSearchResults } from '@/components/models/models-empty-state';
import { Alert } from '@/components/ui/alert';
import { Button } from '@/components/ui/button';
import { Card, CardFooter } from '@/components/ui/card';
import { PageHeader } from '@/components/ui/page-header';
import { modelsInfiniteQuery } from '@/lib/client/query-keys';
import { useDebouncedValue } from '@/lib/client/use-debounced-value';

interface ModelsClientProps {
  entity: string;
  initialSearch: string;
  origin: string;
  exampleBaseModel: string;
}

export function ModelsClient({ entity, initialSearch, origin, exampleBaseModel }: ModelsClientProps) {
  const [searchInput, setSearchInput] = useState(initialSearch);
  const search = useDebouncedValue(searchInput.trim(), 250);

  // The URL follows the search so that it can be shared and survives a reload, without a server round trip.
  useEffect(() => {
    const url = new URL(window.location.href);
    if (search) url.searchParams.set('search', search);
    else url.searchParams.delete('search');
    if (url.href !== window.location.href) window.history.replaceState(window.history.state, '', url);
  }, [search]);

  const models = useInfiniteQuery({
    ...modelsInfiniteQuery({ entity, search }),
    // While a new search loads, the previous results stay on screen instead of a skeleton.
    placeholderData: keepPreviousData,
  });

  const rows = models.data?.pages.flatMap((page) => page.data) ?? [];

  let body;
  if (models.isPending) {
    body = (
      <Card>
        <ModelTableSkeleton />
      </Card>
    );
  } else if (models.isError && rows.length === 0) {
    body = (
      <Alert
        tone="danger"
        role="alert"
        title="Could not load models"
        actions={
          <Button variant="secondary" size="sm" onClick={() => models.refetch()}>
            Try again
          </Button>
        }
      >
        {models.error.message}
      </Alert>
    );
  } else if (rows.length === 0 && !search) {
    body = <ModelsEmptyState entity={entity} origin={origin} baseModel={exampleBaseModel} />;
  } else if (rows.length === 0) {
    body = (
      <Card>
        <NoSearchResults search={search} onClear={() => setSearchInput('')} />
      </Card>
    );
  } else {
    body = (
      <Card aria-busy={models.isPlaceholderData || undefined}>
        <ModelTable models={rows} />
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

  const showToolbar = rows.length > 0 || search !== '' || searchInput !== '';

  return (
    <>
      <PageHeader
        title="Models"
        description={
          <>
            Fine-tuned models in <span className="font-medium text-fg">{entity}</span>, newest first.
          </>
        }
      />
      {showToolbar ? (
        <div className="mb-4 flex flex-wrap items-center justify-between gap-3">
          <ModelSearch value={searchInput} onChange={setSearchInput} busy={models.isFetching && !models.isFetchingNextPage} />
          <p className="text-sm text-fg-subtle" aria-live="polite">
            {rows.length > 0
              ? `${rows.length}${models.hasNextPage ? '+' : ''} model${rows.length === 1 && !models.hasNextPage ? '' : 's'}`
              : null}
          </p>
        </div>
      ) : null}
      {body}
    </>
  );
}
