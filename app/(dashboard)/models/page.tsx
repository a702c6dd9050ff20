import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { requestOrigin, requirePrincipal } from '@/app/_lib/session';
import { resolveEntity } from '@/lib/client/navigation/entity';
import { baseModelsQuery, MODEL_PAGE_SIZE, modelsInfiniteQuery, projectsQuery } from '@/lib/client/queries/models';
import { toSessionDto } from '@/lib/services/accounts';
import { baseModelDtos } from '@/lib/services/base-models';
import { availableBaseModels } from '@/lib/catalog/base-models';
import { listModels, listProjects } from '@/lib/services/models';
import { ModelsClient } from './client';
import { parseModelsSearchParams } from './search-params';

export const metadata: Metadata = { title: 'Models' };

export default async function ModelsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const principal = await requirePrincipal();
  const params = parseModelsSearchParams(await searchParams);
  const entity = resolveEntity(toSessionDto(principal), params.entity ?? undefined);
  const filters = { entity, search: params.search, project: params.project, baseModel: params.base_model };

  // The first page comes from the service layer in this render; "Load more" and searches go through /v1.
  const queryClient = new QueryClient();
  await queryClient.prefetchInfiniteQuery({
    ...modelsInfiniteQuery(filters),
    queryFn: () =>
      listModels(principal, {
        entity,
        search: params.search || undefined,
        project: params.project || undefined,
        base_model: params.base_model || undefined,
        limit: MODEL_PAGE_SIZE,
      }),
  });

  const baseModels = availableBaseModels();
  // The filters and the create dialog need both lists on first paint; they are small.
  await Promise.all([
    queryClient.prefetchQuery({ ...projectsQuery(entity), queryFn: () => listProjects(principal, entity) }),
    queryClient.prefetchQuery({
      ...baseModelsQuery(),
      queryFn: async () => ({ object: 'list' as const, data: await baseModelDtos() }),
    }),
  ]);
  const exampleBaseModel =
    (baseModels.find((m) => m.backend === 'builtin') ?? baseModels[0])?.id ?? 'tuneboard/tiny-chat';

  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      {/* Keyed by entity: switching entity starts with a fresh search box. */}
      <ModelsClient
        key={entity}
        entity={entity}
        defaultEntity={principal.personalEntity.name}
        origin={await requestOrigin()}
        exampleBaseModel={exampleBaseModel}
      />
    </HydrationBoundary>
  );
}
