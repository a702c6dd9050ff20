import { z } from 'zod';
import { idSchema, jsonInt, limitQuery, nameSegmentSchema, queryInt, rangedNumber, timestampSchema } from './common';
import { modelSummarySchema } from './models';
import { createSftJobBodySchema } from './training-jobs';

/**
 * Evaluations (docs/contract.md §11, docs/evals.md): eval sets (versioned JSONL of examples), scorers, eval runs
 * with their per-example results, and a model's auto-eval setting.
 */

/** At most this many examples in one eval set (docs/contract.md §11.1). */
export const MAX_EVAL_EXAMPLES = 10_000;
export const MAX_EVAL_TARGETS = 8;
export const MAX_EVAL_SCORERS = 8;
export const MAX_EVAL_SAMPLES = 16;

/** Cursor lists: the same envelope as the other list routes, plus `next_cursor` (the `after` of the next page). */
export const cursorList = <T extends z.ZodType>(item: T) =>
  z.object({
    object: z.literal('list'),
    data: z.array(item),
    has_more: z.boolean(),
    next_cursor: z.string().optional().describe('Pass as `after` for the next page; absent on the last page'),
  });

// ---------------------------------------------------------------------------------------------------------------
// Eval sets

export const uploadEvalSetQuerySchema = z.object({
  entity: nameSegmentSchema.optional().describe("Entity name; the caller's personal entity when absent"),
  project: nameSegmentSchema,
  name: nameSegmentSchema.describe('Eval set name; each upload of the same name adds a version'),
});

export const evalSetSchema = z.object({
  object: z.literal('eval_set'),
  id: idSchema,
  entity: z.string(),
  project: z.string(),
  name: z.string(),
  version: z.int(),
  num_examples: z.int(),
  created_at: timestampSchema,
  sha256: z.string().describe('SHA-256 of the uploaded file, hex'),
});
export type EvalSetDto = z.infer<typeof evalSetSchema>;
export const evalSetListSchema = cursorList(evalSetSchema);

export const listEvalSetsQuerySchema = z.object({
  entity: z.string().optional().describe('Entity name; all accessible entities when absent'),
  project: z.string().optional(),
  name: z.string().optional().describe("A set's name: its versions, newest first"),
  after: z.string().optional().describe('next_cursor of the previous page'),
  limit: limitQuery,
});

export const evalSetParamsSchema = z.object({ eval_set_id: idSchema });

export const evalExampleSchema = z.object({
  index: z.int().describe("0-based position among the file's examples"),
  messages: z.array(z.looseObject({ role: z.string(), content: z.string() })),
  reference: z.unknown().describe('Any JSON value; null when the example has none'),
  metadata: z.record(z.string(), z.unknown()),
});
export type EvalExampleDto = z.infer<typeof evalExampleSchema>;
export const evalExampleListSchema = cursorList(evalExampleSchema);

export const pageByIndexQuerySchema = z.object({
  after: queryInt().pipe(z.int().min(-1)).optional().describe('next_cursor of the previous page (an index)'),
  limit: limitQuery,
});

// ---------------------------------------------------------------------------------------------------------------
// Scorers

export const SCORER_NAME = /^[a-z0-9_-]{1,40}$/;
const scorerName = z
  .string()
  .regex(SCORER_NAME, 'scorer names are 1-40 of a-z, 0-9, _ and -')
  .optional()
  .describe('Unique within a run; default: the type');

/** Generation settings of an eval run (and of a judge): the chat request's own fields, checked the same way. */
export const evalSamplingSchema = z
  .object({
    temperature: rangedNumber({ min: 0, max: 2 }, 'temperature must be between 0 and 2').optional(),
    top_p: rangedNumber({ gt: 0, max: 1 }, 'top_p must be greater than 0 and at most 1').optional(),
    max_tokens: jsonInt().min(1).max(32_768).optional(),
    seed: jsonInt().optional(),
    stop: z.union([z.string(), z.array(z.string()).max(4)]).optional(),
  })
  .strict();
export type EvalSampling = z.infer<typeof evalSamplingSchema>;
export const DEFAULT_EVAL_SAMPLING = { temperature: 0, max_tokens: 256, top_p: 1, seed: 0 } as const;

export const scorerSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('exact_match'), name: scorerName, normalize: z.boolean().optional() }),
  z.object({ type: z.literal('contains'), name: scorerName, case_sensitive: z.boolean().optional() }),
  z.object({
    type: z.literal('regex'),
    name: scorerName,
    pattern: z.string().min(1).max(10_000),
    flags: z.string().max(8).optional(),
  }),
  z.object({ type: z.literal('json_schema'), name: scorerName, schema: z.record(z.string(), z.unknown()) }),
  z.object({
    type: z.literal('numeric'),
    name: scorerName,
    tolerance: rangedNumber({ min: 0 }, 'tolerance must be at least 0').optional(),
    relative: rangedNumber({ min: 0 }, 'relative must be at least 0').optional(),
  }),
  z.object({
    type: z.literal('judge'),
    name: scorerName,
    model: z.string().min(1).max(512).describe('Any chat model name Tuneboard serves'),
    rubric: z.string().min(1).max(20_000),
    sampling: evalSamplingSchema.optional(),
  }),
]);
export type ScorerInput = z.infer<typeof scorerSchema>;

/** A scorer as a run stores and returns it: with its name, and `client` for scores a client posted. */
export const storedScorerSchema = z.looseObject({ type: z.string(), name: z.string() });
export type StoredScorer = z.infer<typeof storedScorerSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Eval runs

export const EVAL_RUN_STATUS = ['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export const evalRunStatusSchema = z.enum(EVAL_RUN_STATUS);

export const createEvalRunBodySchema = z.object({
  eval_set_id: idSchema,
  targets: z.array(z.string().min(1).max(512)).min(1).max(MAX_EVAL_TARGETS),
  scorers: z.array(scorerSchema).min(1).max(MAX_EVAL_SCORERS),
  sampling: evalSamplingSchema.optional(),
  n: jsonInt().min(1).max(MAX_EVAL_SAMPLES).optional(),
  name: z.string().max(200).optional(),
});
export type CreateEvalRunBody = z.infer<typeof createEvalRunBodySchema>;

export const evalTargetSchema = z.object({
  name: z.string().describe('Canonical: entity/project/name:stepN for a checkpoint, else the model name'),
  model_id: idSchema.nullable(),
  step: z.int().nullable(),
});

export const evalSummaryRowSchema = z.object({
  target: z.string(),
  scorer: z.string(),
  mean: z.number(),
  passed: z.int(),
  total: z.int(),
});

export const evalRunSchema = z.object({
  object: z.literal('eval_run'),
  id: idSchema,
  eval_set_id: idSchema,
  eval_set: z.object({ name: z.string(), version: z.int(), project: z.string() }),
  name: z.string().nullable(),
  status: evalRunStatusSchema,
  error: z.string().nullable(),
  targets: z.array(evalTargetSchema),
  scorers: z.array(storedScorerSchema),
  sampling: z.record(z.string(), z.unknown()),
  n: z.int(),
  progress: z.object({ done: z.int(), total: z.int() }),
  summary: z.array(evalSummaryRowSchema),
  created_at: timestampSchema,
  started_at: timestampSchema.nullable(),
  finished_at: timestampSchema.nullable(),
});
export type EvalRunDto = z.infer<typeof evalRunSchema>;
export const evalRunListSchema = cursorList(evalRunSchema);

export const listEvalRunsQuerySchema = z.object({
  entity: z.string().optional().describe('Entity name; all accessible entities when absent'),
  eval_set_id: idSchema.optional(),
  model_id: idSchema.optional().describe('Runs with a target that is a checkpoint of this model'),
  project: z.string().optional().describe("The eval set's project"),
  after: z.string().optional().describe('next_cursor of the previous page'),
  limit: limitQuery,
});

export const evalRunParamsSchema = z.object({ eval_run_id: idSchema });

export const EVAL_EVENT_TYPES = [
  'eval_started',
  'eval_progress',
  'eval_completed',
  'eval_failed',
  'eval_cancelled',
] as const;
export const evalEventSchema = z.object({
  id: z.string().describe('The event sequence number; pass the last one as `after`'),
  type: z.enum(EVAL_EVENT_TYPES),
  message: z.string(),
  data: z.record(z.string(), z.unknown()),
  created_at: timestampSchema,
});
export const evalEventListSchema = cursorList(evalEventSchema);
export const evalEventsQuerySchema = z.object({
  after: queryInt().pipe(z.int().min(0)).optional().describe('id of the last event already seen'),
  limit: queryInt().pipe(z.int().min(1).max(1000)).optional().default(100),
});

export const scoreValueSchema = z.object({
  score: z.number(),
  passed: z.boolean(),
  judge_prompt: z.unknown().optional(),
  verdict: z.string().optional(),
  comment: z.string().optional(),
  error: z.string().optional(),
});

export const evalOutputSchema = z.object({
  target: z.string(),
  sample: z.int(),
  text: z.string().nullable(),
  finish_reason: z.string().nullable(),
  error: z.string().nullable().optional(),
  scores: z.record(z.string(), scoreValueSchema),
});

export const evalResultRowSchema = evalExampleSchema.extend({ outputs: z.array(evalOutputSchema) });
export type EvalResultRowDto = z.infer<typeof evalResultRowSchema>;
export const evalResultListSchema = cursorList(evalResultRowSchema);

export const evalResultsQuerySchema = pageByIndexQuerySchema.extend({
  filter: z.enum(['regressed', 'improved', 'changed']).optional(),
  a: z.string().optional().describe('Target A of the filter (a target name of the run)'),
  b: z.string().optional().describe('Target B of the filter'),
});

export const clientScoresBodySchema = z.object({
  scorer: z.string().regex(SCORER_NAME, 'scorer names are 1-40 of a-z, 0-9, _ and -'),
  scores: z
    .array(
      z.object({
        index: jsonInt().min(0),
        target: z.string().min(1),
        sample: jsonInt().min(0).optional(),
        score: z.number(),
        comment: z.string().max(2000).optional(),
      }),
    )
    .min(1)
    .max(10_000),
});
export type ClientScoresBody = z.infer<typeof clientScoresBodySchema>;

// ---------------------------------------------------------------------------------------------------------------
// Auto-eval

export const autoEvalBodySchema = z.object({
  eval_set_id: idSchema,
  scorers: z.array(scorerSchema).min(1).max(MAX_EVAL_SCORERS),
  sampling: evalSamplingSchema.optional(),
  n: jsonInt().min(1).max(MAX_EVAL_SAMPLES).optional(),
});
export type AutoEvalBody = z.infer<typeof autoEvalBodySchema>;

export const autoEvalSchema = z.object({
  eval_set_id: idSchema,
  scorers: z.array(storedScorerSchema),
  sampling: z.record(z.string(), z.unknown()),
  n: z.int(),
});
export const autoEvalResponseSchema = z.object({ auto_eval: autoEvalSchema.nullable() });

// ---- Where other resources carry an eval setting ------------------------------------------------------------------
// Declared here rather than in models.ts and training-jobs.ts: those are on every dashboard page's first load, and
// this file's scorer union would then ship with every route (the heaviest were 0.3-1 kB past their 250 kB budget).

/** GET /v1/preview/models/{id}: the summary plus the model's auto-eval setting (docs/evals.md). */
export const modelDetailSchema = modelSummarySchema.extend({
  auto_eval: autoEvalSchema.nullable().describe('Every new checkpoint is evaluated on this set; null: off'),
});
export type ModelDetailDto = z.infer<typeof modelDetailSchema>;

/** POST /v1/preview/sft-training-jobs: the SFT job body plus the `eval` extension. */
export const createSftJobWithEvalBodySchema = createSftJobBodySchema.extend({
  eval: autoEvalBodySchema
    .nullish()
    .describe("Extension: evaluate every new checkpoint of the model on this eval set (sets the model's auto-eval)"),
});
