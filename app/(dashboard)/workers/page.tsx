import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { requirePrincipal } from '@/app/_lib/session';
import { trainingWorkersQuery } from '@/lib/client/queries/workers';
import { listConnectedWorkers } from '@/lib/services/training-workers';
import { WorkersClient } from './client';

export const metadata: Metadata = { title: 'Training workers' };

export default async function WorkersPage() {
  const principal = await requirePrincipal();
  const queryClient = new QueryClient();
  await queryClient.prefetchQuery({ ...trainingWorkersQuery(), queryFn: () => listConnectedWorkers(principal) });
  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <WorkersClient />
    </HydrationBoundary>
  );
}
