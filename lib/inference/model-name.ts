import { requestError } from './chat-errors';

/**
 * The `model` string of a chat request (docs/contract.md §7). Parsing is pure; the caller looks the result up
 * within the key's scope and answers `modelNotFoundError(model)` (404) when nothing matches.
 */
export type ModelTarget =
  /** A trained model's checkpoint: `[wandb-artifact:[//[/]]]entity/project/name[:stepN|:latest]`. */
  | { kind: 'checkpoint'; entity: string; project: string; name: string; version: 'latest' | { step: number } }
  /** Not checkpoint-shaped and unprefixed: may be a supported base-model id (e.g. `OpenPipe/Qwen3-14B-Instruct`). */
  | { kind: 'base'; id: string }
  /** Can name nothing (bad version suffix, wrong segment count after the prefix…): answer 404 without a lookup. */
  | { kind: 'unknown' };

export const MODEL_REQUIRED_MESSAGE = 'A model ID must be given in `model`.';
const PREFIX = 'wandb-artifact:';

/**
 * Parses `model` as sent. A missing or empty value is the 400 of docs/contract.md §7 item 6, raised here because it comes
 * at model resolution, after the request validators (docs/contract.md §8.2 order item 2).
 */
export function parseModelName(model: string | null | undefined): ModelTarget {
  if (model === null || model === undefined || model === '') throw requestError(MODEL_REQUIRED_MESSAGE, 'model');

  const prefixed = model.startsWith(PREFIX);
  // docs/contract.md §7 step 1: the docs spell the prefix with two or three slashes, so any number of leading '/' goes.
  const rest = (prefixed ? model.slice(PREFIX.length) : model).replace(/^\/+/, '');

  let path = rest;
  let version: 'latest' | { step: number } = 'latest';
  const colon = rest.lastIndexOf(':');
  if (colon >= 0) {
    // docs/contract.md §7 step 2: split at the last ':'; only step<digits> and latest name a checkpoint.
    const tag = rest.slice(colon + 1);
    path = rest.slice(0, colon);
    const step = /^step(\d+)$/.exec(tag);
    if (step) {
      const n = Number(step[1]);
      if (!Number.isSafeInteger(n)) return { kind: 'unknown' };
      version = { step: n };
    } else if (tag === 'latest') version = 'latest';
    else return prefixed ? { kind: 'unknown' } : { kind: 'base', id: model };
  }

  // docs/contract.md §7 step 3: exactly three non-empty segments. Names never contain ':' (docs/contract.md §2.1), so such a segment
  // can only miss.
  const segments = path.split('/');
  const wellFormed = segments.length === 3 && segments.every((s) => s !== '' && !s.includes(':'));
  if (wellFormed) {
    const [entity, project, name] = segments;
    return { kind: 'checkpoint', entity, project, name, version };
  }
  if (prefixed) return { kind: 'unknown' };
  // An unprefixed string that is not entity/project/name[:version] can only be a base-model id, compared
  // as sent against the supported list.
  return { kind: 'base', id: model };
}
