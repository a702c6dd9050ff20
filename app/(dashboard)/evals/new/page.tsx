import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { requirePrincipal } from '@/app/_lib/session';
import { chatModelsQuery, MODEL_PICKER_LIMIT, modelPickerQuery } from '@/lib/client/queries/models';
import { MAX_TARGETS } from '@/lib/client/evals/evals';
import { listServableModels } from '@/lib/services/chat-models';
import { listModels } from '@/lib/services/models';
import { NewEvalRunClient } from './client';

export const metadata: Metadata = { title: 'New eval run' };

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? '';
const all = (v: string | string[] | undefined) => (Array.isArray(v) ? v : v ? [v] : []);

/**
 * Start an eval run: `?set=<eval set id>` and `?target=` (repeatable) pre-fill it, as the model page's and a set's
 * links do. The pickers' lists come with the page, as on the playground; eval sets load in the browser.
 */
export default async function NewEvalRunPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const principal = await requirePrincipal();
  const raw = await searchParams;
  const queryClient = new QueryClient();
  await Promise.allSettled([
    queryClient.prefetchQuery({ ...chatModelsQuery(), queryFn: () => listServableModels(principal) }),
    queryClient.prefetchQuery({
      ...modelPickerQuery(null),
      queryFn: () => listModels(principal, { limit: MODEL_PICKER_LIMIT }),
    }),
  ]);
  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <NewEvalRunClient
        initialSetId={first(raw.set).slice(0, 64)}
        initialTargets={[...new Set(all(raw.target).map((t) => t.trim()))]
          .filter((t) => t !== '' && t.length <= 512)
          .slice(0, MAX_TARGETS)}
      />
    </HydrationBoundary>
  );
}
