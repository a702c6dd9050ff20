import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { preload } from 'react-dom';
import { notFound } from 'next/navigation';
import { requirePrincipal } from '@/app/_lib/session';
import { ApiError } from '@/lib/errors';
import { resolveEntity } from '@/lib/client/navigation/entity';
import { CHECKPOINT_PAGE_SIZE, checkpointPageQuery } from '@/lib/client/queries/checkpoints';
import { historyUrl, trainingCurveUrl } from '@/lib/client/queries/history';
import { MODEL_JOBS_PAGE_SIZE, modelJobsInfiniteQuery } from '@/lib/client/queries/jobs';
import { modelQuery } from '@/lib/client/queries/models';
import { modelTinkerQuery } from '@/lib/client/queries/tinker';
import { idSchema } from '@/lib/schemas/common';
import { toSessionDto } from '@/lib/services/accounts';
import { listCheckpoints } from '@/lib/services/checkpoints';
import { getModel } from '@/lib/services/models';
import { modelTinker } from '@/lib/services/tinker/dashboard';
import { listJobsOfModel } from '@/lib/services/training-jobs';
import { ModelDetailClient } from './client';

export const metadata: Metadata = { title: 'Model' };

interface ModelPageProps {
  params: Promise<{ modelId: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}

export default async function ModelPage({ params, searchParams }: ModelPageProps) {
  const principal = await requirePrincipal();
  const { modelId } = await params;
  // A malformed id can name no model; answering 404 here also keeps it away from the database.
  if (!idSchema.safeParse(modelId).success) notFound();
  const raw = await searchParams;
  const session = toSessionDto(principal);
  const entity = resolveEntity(session, Array.isArray(raw.entity) ? raw.entity[0] : raw.entity);

  const queryClient = new QueryClient();
  try {
    // The model first: a model the user cannot see is a 404 for the whole page, not for each section.
    await queryClient.fetchQuery({ ...modelQuery(modelId), queryFn: () => getModel(principal, modelId) });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) notFound();
    throw error;
  }
  // Tables hydrate with the page, so it paints complete; a failure leaves that section to the browser. The
  // metric history does not: charts draw only after hydration anyway (recharts loads lazily), and a long run's
  // history would hold back the whole HTML and weigh it down by hundreds of kilobytes. Instead the browser is
  // told to fetch it at once, in parallel with the scripts; the query's own request then finds it loaded.
  preload(historyUrl(modelId), { as: 'fetch', crossOrigin: 'anonymous' });
  // The training curve (every job's gradient steps on one axis) too: the run overview and the curve card ask for it.
  preload(trainingCurveUrl(modelId), { as: 'fetch', crossOrigin: 'anonymous' });
  await Promise.allSettled([
    queryClient.prefetchQuery({
      ...checkpointPageQuery(modelId, undefined),
      queryFn: () => listCheckpoints(principal, modelId, { limit: CHECKPOINT_PAGE_SIZE, order: 'desc' }),
    }),
    queryClient.prefetchInfiniteQuery({
      ...modelJobsInfiniteQuery(modelId),
      queryFn: () => listJobsOfModel(principal, modelId, { limit: MODEL_JOBS_PAGE_SIZE }),
    }),
    // Whether the model is a Tinker training client shapes the page (its card, the curve's axis, the empty states):
    // known with the first paint. Any other model is null, as the browser's query reads the route's 404.
    queryClient.prefetchQuery({
      ...modelTinkerQuery(modelId),
      queryFn: () =>
        modelTinker(principal, modelId).catch((error: unknown) => {
          if (error instanceof ApiError && error.status === 404) return null;
          throw error;
        }),
    }),
  ]);

  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <ModelDetailClient modelId={modelId} entity={entity} defaultEntity={session.default_entity} />
    </HydrationBoundary>
  );
}
