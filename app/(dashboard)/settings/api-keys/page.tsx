import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { requestOrigin, requirePrincipal } from '@/app/_lib/session';
import { apiKeysQuery } from '@/lib/client/queries/accounts';
import { listApiKeys } from '@/lib/services/accounts';
import { ApiKeysClient } from './client';

export const metadata: Metadata = { title: 'API keys' };

export default async function ApiKeysPage() {
  const principal = await requirePrincipal();
  const queryClient = new QueryClient();
  await queryClient.prefetchQuery({
    ...apiKeysQuery(),
    queryFn: async () => ({ object: 'list' as const, data: await listApiKeys(principal.userId) }),
  });
  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <ApiKeysClient origin={await requestOrigin()} />
    </HydrationBoundary>
  );
}
