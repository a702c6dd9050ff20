import type { z } from 'zod';
import { ApiError } from '@/lib/errors';
import { zodIssuesToValidation } from '@/lib/errors/zod-issues';
import { JSON_TOO_DEEP_MESSAGE, jsonNestingExceeds } from '@/lib/schemas/json-depth';

/** Which error envelope a body error is reported in (lib/api/respond.ts). */
export type BodyFlavor = 'preview' | 'chat';

export type ParsedBody = { present: false } | { present: true; value: unknown };

export function parseJsonText(text: string, flavor: BodyFlavor): ParsedBody {
  if (text.trim() === '') return { present: false };
  if (jsonNestingExceeds(text)) {
    if (flavor === 'chat') throw new ApiError('bad_request', JSON_TOO_DEEP_MESSAGE, { type: 'Bad Request' });
    throw ApiError.validation([{ loc: ['body'], msg: JSON_TOO_DEEP_MESSAGE, type: 'json_invalid' }]);
  }
  try {
    return { present: true, value: JSON.parse(text) };
  } catch (err) {
    if (flavor === 'chat') {
      throw new ApiError('bad_request', `JSON decode error: ${(err as Error).message}`, { type: 'Bad Request' });
    }
    // FastAPI reports the character position of the decode failure in loc.
    const pos = Number(/position (\d+)/.exec((err as Error).message)?.[1] ?? 0);
    throw ApiError.validation([{ loc: ['body', pos], msg: 'JSON decode error', type: 'json_invalid' }]);
  }
}

export function nulError(loc: (string | number)[]): ApiError {
  return ApiError.validation([{ loc, msg: 'String should not contain NUL (\\u0000) characters', type: 'string_type' }]);
}

/** Path of the first string containing U+0000, skipping top-level fields named in `allowed`. */
function findNul(value: unknown, path: (string | number)[], allowed: Set<string>): (string | number)[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], [...path, i], allowed);
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (path.length === 0 && allowed.has(k)) continue;
      if (k.includes('\u0000')) return [...path, k];
      const found = findNul(v, [...path, k], allowed);
      if (found) return found;
    }
  }
  return null;
}

export interface BodyRules {
  flavor: BodyFlavor;
  /**
   * Body fields whose strings may contain NUL (U+0000), which PostgreSQL text cannot hold: model output in
   * trajectories, stored as json. Everywhere else a NUL is refused up front (422) instead of failing in SQL.
   */
  nulAllowedUnder?: string[];
}

/**
 * A request body's text → the schema's output, or the ApiError the client gets: a missing body, JSON that is
 * too deep or malformed, a NUL where PostgreSQL cannot store one, or the schema's own issues (pydantic-style).
 */
export function validateJsonBody<S extends z.ZodType>(schema: S, text: string, rules: BodyRules): z.output<S> {
  const parsedText = parseJsonText(text, rules.flavor);
  if (!parsedText.present) throw ApiError.validation([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
  if (rules.flavor === 'preview') {
    const at = findNul(parsedText.value, [], new Set(rules.nulAllowedUnder ?? []));
    if (at) throw nulError(['body', ...at]);
  }
  const parsed = schema.safeParse(parsedText.value, { reportInput: true });
  if (!parsed.success) throw ApiError.validation(zodIssuesToValidation(parsed.error, 'body'));
  return parsed.data;
}
