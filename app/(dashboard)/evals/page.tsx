import type { Metadata } from 'next';
import { requirePrincipal } from '@/app/_lib/session';
import { resolveEntity } from '@/lib/client/navigation/entity';
import { toSessionDto } from '@/lib/services/accounts';
import { EvalsClient } from './client';
import { loadEvalsSearchParams } from './search-params';

export const metadata: Metadata = { title: 'Evals' };

/** Eval sets and runs. The lists load in the browser (they refresh while a run is open). */
export default async function EvalsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const principal = await requirePrincipal();
  const params = await loadEvalsSearchParams(searchParams);
  const entity = resolveEntity(toSessionDto(principal), params.entity ?? undefined);
  return <EvalsClient entity={entity} />;
}
