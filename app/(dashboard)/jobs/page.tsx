import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { requestOrigin, requirePrincipal } from '@/app/_lib/session';
import { resolveEntity } from '@/lib/client/navigation/entity';
import { ENTITY_JOBS_PAGE_SIZE, entityJobsQuery } from '@/lib/client/queries/jobs';
import { TINKER_CLIENTS_LIMIT, tinkerClientsQuery } from '@/lib/client/queries/tinker';
import { toSessionDto } from '@/lib/services/accounts';
import { listTrainingClients } from '@/lib/services/tinker/dashboard';
import { listEntityJobs } from '@/lib/services/training-jobs';
import { JobsClient } from './client';

export const metadata: Metadata = { title: 'Jobs' };

export default async function JobsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const principal = await requirePrincipal();
  const raw = await searchParams;
  const session = toSessionDto(principal);
  const entity = resolveEntity(session, Array.isArray(raw.entity) ? raw.entity[0] : raw.entity);
  const queryClient = new QueryClient();
  await Promise.all([
    queryClient.prefetchQuery({
      ...entityJobsQuery(entity, { kind: 'active' }),
      queryFn: () => listEntityJobs(principal, { entity, active: true, limit: ENTITY_JOBS_PAGE_SIZE }),
    }),
    queryClient.prefetchQuery({
      ...entityJobsQuery(entity, { kind: 'page', status: null, cursor: null }),
      queryFn: () => listEntityJobs(principal, { entity, limit: ENTITY_JOBS_PAGE_SIZE }),
    }),
    // Hydrated with the page: whether there are any decides where the card sits, so it must not arrive late.
    queryClient.prefetchQuery({
      ...tinkerClientsQuery(entity),
      queryFn: () => listTrainingClients(principal, { entity, limit: TINKER_CLIENTS_LIMIT }),
    }),
  ]);
  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <JobsClient key={entity} entity={entity} defaultEntity={session.default_entity} origin={await requestOrigin()} />
    </HydrationBoundary>
  );
}
