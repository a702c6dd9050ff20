import { createLoader, parseAsNativeArrayOf, parseAsString } from 'nuqs/server';
import { MAX_PREFILL_CHARS, modelsFromSearchParam } from '@/lib/client/chat/model-choice';

/**
 * The playground's URL state: `?entity=` (see lib/client/navigation/entity.ts) and `?model=`, repeated for a side-by-side
 * comparison (`?model=tuneboard/tiny-random&model=ada/demo/m:step3`), so a comparison can be shared as a link.
 * Parsed on the server for the first panes, kept in the URL by the client (nuqs) as panes change.
 * `?prompt=` pre-fills the message box and `?system=` the system prompt (an eval run's "Open in playground" link
 * sends an example's last user message and its system message); they leave the URL once that message is sent.
 */
export const playgroundSearchParsers = {
  entity: parseAsString,
  model: parseAsNativeArrayOf(parseAsString),
  prompt: parseAsString,
  system: parseAsString,
};

const loadPlaygroundSearchParams = createLoader(playgroundSearchParsers);

export interface InitialPlayground {
  models: string[];
  prompt: string;
  system: string;
}

/** The panes a visit opens with (`?model=` values trimmed, de-duplicated, at most four) and the pre-filled text. */
export async function initialPlayground(
  searchParams: Promise<Record<string, string | string[] | undefined>>,
): Promise<InitialPlayground> {
  const params = await loadPlaygroundSearchParams(searchParams);
  return {
    models: modelsFromSearchParam(params.model),
    prompt: (params.prompt ?? '').slice(0, MAX_PREFILL_CHARS),
    system: (params.system ?? '').slice(0, MAX_PREFILL_CHARS),
  };
}
