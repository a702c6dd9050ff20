import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { requestOrigin, requirePrincipal } from '@/app/_lib/session';
import { randomSeed } from '@/lib/client/chat/chat-request';
import { chatModelsQuery, MODEL_PICKER_LIMIT, modelPickerQuery } from '@/lib/client/queries/models';
import { availableBaseModels } from '@/lib/catalog/base-models';
import { listServableModels } from '@/lib/services/chat-models';
import { listModels } from '@/lib/services/models';
import { PlaygroundClient } from './client';
import { initialPlayground } from './search-params';

export const metadata: Metadata = { title: 'Playground' };

export default async function PlaygroundPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const principal = await requirePrincipal();
  const { models, prompt, system } = await initialPlayground(searchParams);

  // The servable names (GET /v1/models) and the model records behind the trained ones, whose ids list checkpoints.
  const queryClient = new QueryClient();
  await Promise.all([
    queryClient.prefetchQuery({ ...chatModelsQuery(), queryFn: () => listServableModels(principal) }),
    queryClient.prefetchQuery({
      ...modelPickerQuery(null),
      queryFn: () => listModels(principal, { limit: MODEL_PICKER_LIMIT }),
    }),
  ]);

  const base = availableBaseModels();
  const defaultModel =
    (base.find((m) => m.id === 'tuneboard/tiny-chat') ?? base.find((m) => m.backend === 'builtin') ?? base[0])?.id ??
    '';

  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <PlaygroundClient
        initialModels={models.length > 0 ? models : defaultModel ? [defaultModel] : []}
        initialPrompt={prompt}
        initialSystem={system}
        // Drawn here, not in the browser, so that the server's HTML and the first client render agree.
        initialSeed={randomSeed()}
        origin={await requestOrigin()}
      />
    </HydrationBoundary>
  );
}
