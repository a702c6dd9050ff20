import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { requirePrincipal } from '@/app/_lib/session';
import { ApiError } from '@/lib/errors';
import { resolveEntity } from '@/lib/client/navigation/entity';
import { EVENT_PAGE_SIZE, eventViewFromSearchParams, jobEventPageQuery } from '@/lib/client/queries/job-events';
import { jobQuery } from '@/lib/client/queries/jobs';
import { modelQuery } from '@/lib/client/queries/models';
import { idSchema } from '@/lib/schemas/common';
import { toSessionDto } from '@/lib/services/accounts';
import { getModel } from '@/lib/services/models';
import { getJob, listEvents } from '@/lib/services/training-jobs';
import { JobDetailClient } from './client';

export const metadata: Metadata = { title: 'Training job' };

interface JobPageProps {
  params: Promise<{ jobId: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}

export default async function JobPage({ params, searchParams }: JobPageProps) {
  const principal = await requirePrincipal();
  const { jobId } = await params;
  if (!idSchema.safeParse(jobId).success) notFound();
  const raw = await searchParams;
  const session = toSessionDto(principal);
  const entity = resolveEntity(session, Array.isArray(raw.entity) ? raw.entity[0] : raw.entity);
  const eventView = eventViewFromSearchParams(raw);

  const queryClient = new QueryClient();
  let modelId: string;
  try {
    const job = await queryClient.fetchQuery({ ...jobQuery(jobId), queryFn: () => getJob(principal, jobId) });
    modelId = job.model_id;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) notFound();
    throw error;
  }
  await Promise.allSettled([
    queryClient.prefetchQuery({
      ...jobEventPageQuery(jobId, undefined, eventView),
      queryFn: () =>
        listEvents(principal, jobId, {
          limit: EVENT_PAGE_SIZE,
          newest_first: eventView.newestFirst,
          event_type: eventView.type ?? undefined,
        }),
    }),
    // The breadcrumb names the model; a deleted model leaves the job readable (its events stay).
    queryClient.prefetchQuery({ ...modelQuery(modelId), queryFn: () => getModel(principal, modelId) }),
  ]);

  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <JobDetailClient jobId={jobId} entity={entity} defaultEntity={session.default_entity} />
    </HydrationBoundary>
  );
}
