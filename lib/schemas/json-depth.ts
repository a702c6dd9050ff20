/**
 * The deepest nesting a client's JSON may have. Real bodies (trajectories with tool calls, JSON schemas
 * for structured outputs) stay far below it; much deeper bodies only serve to exhaust the stack of the
 * recursive code that walks parsed values (validation, JSON.stringify when storing).
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether `text` opens more than `max` arrays/objects at once. A linear scan of the text, so that it can
 * run before JSON.parse and never recurses itself; brackets inside strings do not count.
 */
export function jsonNestingExceeds(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

export const JSON_TOO_DEEP_MESSAGE = `JSON nested more than ${MAX_JSON_DEPTH} levels deep`;
