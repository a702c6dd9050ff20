import { z } from 'zod';

/** Any 8-4-4-4-12 hex id: Postgres accepts every such value, so we do too (z.uuid() would reject non-RFC variants). */
export const idSchema = z.guid();

export const timestampSchema = z.string().describe('ISO 8601 date-time');

/** Query values are strings on the wire; this parses them the way pydantic does, with its error types. */
function queryNumber(kind: 'int' | 'number') {
  const pattern = kind === 'int' ? /^\s*[+-]?\d+\s*$/ : /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;
  return z.string().transform((raw, ctx) => {
    if (!pattern.test(raw)) {
      ctx.addIssue({ code: 'invalid_type', expected: kind, input: raw, message: `expected ${kind}` });
      return z.NEVER;
    }
    return Number(raw);
  });
}

export const queryInt = () => queryNumber('int');

/** The message jsonInt() gives its type errors; lib/errors/zod-issues.ts reads it back as pydantic's int_* types. */
export const INT_EXPECTED = 'Input should be a valid integer';

/**
 * An integer in a JSON body. zod reports a non-number given to z.int() with `expected: "number"`, which would
 * read as pydantic's float_* errors; this schema's own error message marks the issue so that the 422 says
 * int_parsing / int_type like FastAPI does (docs/contract.md §1.5, §2.4).
 */
export const jsonInt = () => z.int({ error: (issue) => (issue.code === 'invalid_type' ? INT_EXPECTED : undefined) });

export const queryBool = () =>
  z.string().transform((raw, ctx) => {
    const v = raw.trim().toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(v)) return true;
    if (['false', '0', 'no', 'off'].includes(v)) return false;
    ctx.addIssue({ code: 'invalid_type', expected: 'boolean', input: raw, message: 'expected boolean' });
    return z.NEVER;
  });

/** Page size of every list route: 1–100, default 20 (docs/contract.md §2.3, §3.4). */
export const limitQuery = queryInt()
  .pipe(z.int().min(1).max(100))
  .optional()
  .default(20)
  .describe('Page size, 1 to 100');

export const listEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({
    object: z.literal('list'),
    data: z.array(item),
    has_more: z.boolean(),
    first_id: z.string().describe('ID of the first item of this page, "" when empty'),
    last_id: z.string().describe('ID of the last item of this page, "" when empty'),
  });

export type ListEnvelope<T> = {
  object: 'list';
  data: T[];
  has_more: boolean;
  first_id: string;
  last_id: string;
};

export function toList<T extends { id: string }>(data: T[], hasMore: boolean): ListEnvelope<T> {
  return { object: 'list', data, has_more: hasMore, first_id: data[0]?.id ?? '', last_id: data.at(-1)?.id ?? '' };
}

/**
 * A response body that is already JSON text, which route() sends as it is (and, outside production, still checks
 * against the route's response schema). For hot list routes whose items the database writes out as JSON: decoding
 * each row into objects only to serialize them again cost more than the rest of such a request.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * A list envelope (the same keys, in the same order, as toList's) around items already serialized: `items` is
 * their JSON texts joined by commas, '' for none. Ids go in unescaped, so they must be uuids or similar.
 */
export function listText(items: string, hasMore: boolean, firstId: string, lastId: string): JsonText {
  return new JsonText(
    `{"object":"list","data":[${items}],"has_more":${hasMore},"first_id":"${firstId}","last_id":"${lastId}"}`,
  );
}

/**
 * Entity, project and model names become parts of `entity/project/name:stepN` inference names,
 * so they must be non-empty and free of `/` and `:` (docs/contract.md §2.1).
 */
export const nameSegmentSchema = z
  .string()
  .max(128)
  .superRefine((value, ctx) => {
    if (value.trim() === '') ctx.addIssue({ code: 'custom', message: 'must not be empty' });
    else if (/[/:]/.test(value)) ctx.addIssue({ code: 'custom', message: "must not contain '/' or ':'" });
    else if (/[\u0000-\u001f\u007f]/.test(value))
      ctx.addIssue({ code: 'custom', message: 'must not contain control characters' });
  });

export const metricsSchema = z.record(z.string(), z.number()).describe('Metric name to finite number');

export const errorDetailSchema = z.object({ detail: z.string() });
export const validationErrorSchema = z.object({
  detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() })),
});

/**
 * A number within bounds, refused with `text` (a pydantic value_error) otherwise; the bounds also go into the OpenAPI
 * document. NaN and ±Infinity cannot be written in JSON, so every such number is finite.
 */
export function rangedNumber(range: { min?: number; max?: number; gt?: number; lt?: number }, text: string) {
  const { min, max, gt, lt } = range;
  return z
    .number()
    .refine(
      (v) =>
        (min === undefined || v >= min) &&
        (max === undefined || v <= max) &&
        (gt === undefined || v > gt) &&
        (lt === undefined || v < lt),
      text,
    )
    .meta({
      ...(min === undefined ? {} : { minimum: min }),
      ...(max === undefined ? {} : { maximum: max }),
      ...(gt === undefined ? {} : { exclusiveMinimum: gt }),
      ...(lt === undefined ? {} : { exclusiveMaximum: lt }),
    });
}

/**
 * The largest learning rate any trainer accepts (SFT, RL and the Tinker API alike). Nobody means more than 1 for Adam
 * on a pretrained model; a larger value (1e308 was sent by a fuzzer) would only blow the weights up to NaN and fail
 * the job with an internal error.
 */
export const MAX_LEARNING_RATE = 1;
