import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { requirePrincipal } from '@/app/_lib/session';
import { resolveEntity } from '@/lib/client/navigation/entity';
import { usageQuery } from '@/lib/client/queries/usage';
import { toSessionDto } from '@/lib/services/accounts';
import { listUsage } from '@/lib/services/usage';
import { UsageClient } from './client';
import { parseUsageSearchParams } from './search-params';

export const metadata: Metadata = { title: 'Usage' };

export default async function UsagePage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const principal = await requirePrincipal();
  const params = parseUsageSearchParams(await searchParams);
  // Usage is billed per entity, so this tab follows the selected one (unlike keys and teams).
  const entity = resolveEntity(toSessionDto(principal), params.entity ?? undefined);
  const queryClient = new QueryClient();
  await queryClient.prefetchQuery({
    ...usageQuery(entity, params.days),
    queryFn: () => listUsage(principal, { entity, days: params.days }),
  });
  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <UsageClient key={entity} entity={entity} />
    </HydrationBoundary>
  );
}
