import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { requestOrigin, requirePrincipal } from '@/app/_lib/session';
import { resolveEntity } from '@/lib/client/navigation/entity';
import { MODEL_PICKER_LIMIT, modelPickerQuery } from '@/lib/client/queries/models';
import { toSessionDto } from '@/lib/services/accounts';
import { listModels } from '@/lib/services/models';
import { SftLaunchClient } from './client';
import { parseSftSearchParams } from './search-params';

export const metadata: Metadata = { title: 'Fine-tune a model' };

export default async function SftLaunchPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const principal = await requirePrincipal();
  const session = toSessionDto(principal);
  const params = parseSftSearchParams(await searchParams);
  const entity = resolveEntity(session, params.entity);

  // Every model the user can train, whatever entity is selected: a `?model=` link from a team's model
  // must preselect it even while the personal entity is selected.
  const queryClient = new QueryClient();
  await queryClient.prefetchQuery({
    ...modelPickerQuery(null),
    queryFn: () => listModels(principal, { limit: MODEL_PICKER_LIMIT }),
  });

  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <SftLaunchClient
        entity={entity}
        defaultEntity={session.default_entity}
        initialModelId={params.model ?? null}
        initialStartStep={params.from ?? null}
        origin={await requestOrigin()}
      />
    </HydrationBoundary>
  );
}
