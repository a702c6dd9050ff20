import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { requirePrincipal } from '@/app/_lib/session';
import { teamsQuery } from '@/lib/client/queries/accounts';
import { listTeams, toSessionDto } from '@/lib/services/accounts';
import { TeamsClient } from './client';

export const metadata: Metadata = { title: 'Teams' };

export default async function TeamsPage() {
  const principal = await requirePrincipal();
  const queryClient = new QueryClient();
  await queryClient.prefetchQuery({
    ...teamsQuery(),
    queryFn: async () => ({ object: 'list' as const, data: await listTeams(principal) }),
  });
  const session = toSessionDto(principal);
  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <TeamsClient currentUserId={session.user.id} defaultEntity={session.default_entity} />
    </HydrationBoundary>
  );
}
