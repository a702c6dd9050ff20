import { z } from 'zod';
import type { ChartSpec } from '../charts/chart-series';
import { MAX_PREFILL_CHARS, splitModelName } from '../chat/model-choice';

/*
 * The Evals view's reading of the evaluation API (/tmp/helpers/evals-contract.md, docs/contract.md "Evaluations"):
 * the response shapes as zod schemas, and the pure functions the pages draw from (score per checkpoint, the
 * summary grid, each example's pass/fail marks, the playground link of a row, the run form's scorers). Schemas
 * are lenient where the contract leaves room (a cursor as `next_cursor` or `last_id`, optional timestamps), strict
 * where the page depends on a value.
 */

/** Scorer types the run form offers (`client` scores are posted by a client, never configured here). */
export const SCORER_TYPES = ['exact_match', 'contains', 'regex', 'numeric', 'json_schema', 'judge'] as const;
export type ScorerType = (typeof SCORER_TYPES)[number];

export const RUN_STATUSES = ['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type EvalRunStatus = (typeof RUN_STATUSES)[number];

export const MAX_TARGETS = 8;
export const MAX_SCORERS = 8;
export const MAX_SAMPLES = 16;
export const SCORER_NAME = /^[a-z0-9_-]{1,40}$/;

/** A cursor-paged list: the contract's `next_cursor`, or `last_id` as the other list routes send it. */
const cursorList = <T extends z.ZodType>(item: T) =>
  z
    .object({
      object: z.literal('list'),
      data: z.array(item),
      has_more: z.boolean().default(false),
      next_cursor: z.string().nullish(),
      last_id: z.string().nullish(),
    })
    .transform((list) => ({
      data: list.data,
      hasMore: list.has_more,
      next: list.has_more ? list.next_cursor || list.last_id || null : null,
    }));

export const evalSetSchema = z.object({
  id: z.string(),
  entity: z.string().default(''),
  project: z.string(),
  name: z.string(),
  version: z.number(),
  num_examples: z.number(),
  created_at: z.union([z.string(), z.number()]).nullish(),
  sha256: z.string().nullish(),
});
export type EvalSet = z.infer<typeof evalSetSchema>;
export const evalSetListSchema = cursorList(evalSetSchema);

/** A chat message as stored: `content` is text, content parts or null (an assistant's tool call). */
export const evalMessageSchema = z.looseObject({
  role: z.string(),
  content: z.unknown().optional(),
});
export type EvalMessage = z.infer<typeof evalMessageSchema>;

export const evalExampleSchema = z.object({
  index: z.number(),
  messages: z.array(evalMessageSchema),
  reference: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
});
export type EvalExample = z.infer<typeof evalExampleSchema>;
export const evalExampleListSchema = cursorList(evalExampleSchema);

export const evalTargetSchema = z.object({
  name: z.string(),
  model_id: z.string().nullish(),
  step: z.number().nullish(),
});
export type EvalTarget = z.infer<typeof evalTargetSchema>;

export const summaryRowSchema = z.object({
  target: z.string(),
  scorer: z.string(),
  mean: z.number().nullable(),
  passed: z.number().default(0),
  total: z.number().default(0),
});
export type SummaryRow = z.infer<typeof summaryRowSchema>;

export const evalRunSchema = z.object({
  id: z.string(),
  eval_set_id: z.string(),
  eval_set: z.object({ name: z.string(), version: z.number(), project: z.string() }).nullish(),
  name: z.string().nullish(),
  status: z.enum(RUN_STATUSES),
  error: z.string().nullish(),
  targets: z.array(evalTargetSchema),
  scorers: z.array(z.looseObject({ type: z.string(), name: z.string().optional() })),
  sampling: z.record(z.string(), z.unknown()).nullish(),
  n: z.number().default(1),
  progress: z.object({ done: z.number(), total: z.number() }).nullish(),
  summary: z.array(summaryRowSchema).default([]),
  created_at: z.union([z.string(), z.number()]).nullish(),
  started_at: z.union([z.string(), z.number()]).nullish(),
  finished_at: z.union([z.string(), z.number()]).nullish(),
});
export type EvalRun = z.infer<typeof evalRunSchema>;
export const evalRunListSchema = cursorList(evalRunSchema);

export const sampleScoreSchema = z.looseObject({
  score: z.number().nullable(),
  passed: z.boolean().nullish(),
  verdict: z.string().nullish(),
  judge_prompt: z.unknown().optional(),
  comment: z.string().nullish(),
  error: z.string().nullish(),
});
export type SampleScore = z.infer<typeof sampleScoreSchema>;

export const resultOutputSchema = z.object({
  target: z.string(),
  sample: z.number().default(0),
  text: z.string().nullish(),
  finish_reason: z.string().nullish(),
  error: z.string().nullish(),
  scores: z.record(z.string(), sampleScoreSchema).default({}),
});
export type ResultOutput = z.infer<typeof resultOutputSchema>;

export const resultRowSchema = evalExampleSchema.extend({ outputs: z.array(resultOutputSchema).default([]) });
export type ResultRow = z.infer<typeof resultRowSchema>;
export const resultListSchema = cursorList(resultRowSchema);

export const autoEvalSchema = z.object({
  auto_eval: z
    .looseObject({
      eval_set_id: z.string(),
      scorers: z.array(z.looseObject({ type: z.string(), name: z.string().optional() })),
      sampling: z.record(z.string(), z.unknown()).nullish(),
      n: z.number().nullish(),
    })
    .nullable(),
});
export type AutoEval = z.infer<typeof autoEvalSchema>['auto_eval'];

export const RESULT_FILTERS = ['all', 'regressed', 'improved', 'changed'] as const;
export type ResultFilter = (typeof RESULT_FILTERS)[number];

// ————— Reading sets and runs —————

/** A timestamp as ISO: seconds since the epoch (OpenAI-style objects) or an ISO string already; none is null. */
export function timestampIso(value: string | number | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'number' ? new Date(value * 1000).toISOString() : value;
}

/** The list's sets grouped by entity/project/name, each group newest version first, groups in list order. */
export function groupSetVersions(sets: readonly EvalSet[]): EvalSet[][] {
  const groups = new Map<string, EvalSet[]>();
  for (const s of sets) {
    const key = `${s.entity}/${s.project}/${s.name}`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups.values()].map((g) => [...g].sort((a, b) => b.version - a.version));
}

export function isActiveRun(status: EvalRunStatus): boolean {
  return status === 'QUEUED' || status === 'RUNNING';
}

/** done/total as 0–1; null while the total is not known yet (a queued run). */
export function runProgress(run: Pick<EvalRun, 'progress' | 'status'>): number | null {
  if (run.status === 'COMPLETED') return 1;
  const p = run.progress;
  if (!p || p.total <= 0) return null;
  return Math.min(1, Math.max(0, p.done / p.total));
}

/** Scorer names in the run's order, then any posted by a client (they appear only in the summary). */
export function scorerNames(run: Pick<EvalRun, 'scorers' | 'summary'>): string[] {
  const names = run.scorers.map((s) => s.name ?? s.type);
  for (const row of run.summary) if (!names.includes(row.scorer)) names.push(row.scorer);
  return names;
}

/** A target's short label: the model's own name and its step (`m · step 3`), or the whole name of a base model. */
export function targetLabel(name: string): string {
  const { model, step } = splitModelName(name);
  const parts = model.split('/');
  // A trained model is entity/project/name; a base model id (`tuneboard/tiny-random`) is shown as it is.
  const short = parts.length === 3 ? parts[2] : model;
  return step === null ? short : `${short} · step ${step}`;
}

/** The summary as a grid: one row per target, a cell per scorer (undefined: that pair has no row yet). */
export function summaryGrid(run: Pick<EvalRun, 'targets' | 'scorers' | 'summary'>): {
  scorers: string[];
  rows: { target: string; cells: (SummaryRow | undefined)[] }[];
} {
  const scorers = scorerNames(run);
  const targets = run.targets.map((t) => t.name);
  for (const row of run.summary) if (!targets.includes(row.target)) targets.push(row.target);
  return {
    scorers,
    rows: targets.map((target) => ({
      target,
      cells: scorers.map((s) => run.summary.find((r) => r.target === target && r.scorer === s)),
    })),
  };
}

/**
 * Score per checkpoint: one line per model × scorer over the checkpoints' steps (x = step). Targets without a step
 * (a base model, an upstream model) have no place on a step axis: they are returned apart, for the table to show.
 */
export function scoreChart(run: Pick<EvalRun, 'targets' | 'scorers' | 'summary'>): {
  chart: ChartSpec | null;
  offChart: string[];
} {
  const scorers = scorerNames(run);
  const models: string[] = [];
  const offChart: string[] = [];
  for (const t of run.targets) {
    const step = t.step ?? splitModelName(t.name).step;
    if (step === null) offChart.push(t.name);
    else if (!models.includes(splitModelName(t.name).model)) models.push(splitModelName(t.name).model);
  }
  const series = models.flatMap((model) =>
    scorers.flatMap((scorer) => {
      const points = run.targets
        .flatMap((t) => {
          const step = t.step ?? splitModelName(t.name).step;
          if (step === null || splitModelName(t.name).model !== model) return [];
          const row = run.summary.find((r) => r.target === t.name && r.scorer === scorer);
          return row && row.mean !== null && Number.isFinite(row.mean) ? [{ step, value: row.mean }] : [];
        })
        .sort((a, b) => a.step - b.step);
      if (points.length === 0) return [];
      const label = models.length > 1 ? `${targetLabel(model)} · ${scorer}` : scorer;
      return [{ name: label, split: '', totalPoints: points.length, points }];
    }),
  );
  return { chart: series.length ? { metric: 'Score per checkpoint', series } : null, offChart };
}

/** A mean score as a percentage (0.75 → 75%, 0.8333 → 83.3%), the way pass rates are read; none is a dash. */
export function formatScore(mean: number | null | undefined): string {
  if (mean === null || mean === undefined || !Number.isFinite(mean)) return '—';
  const pct = mean * 100;
  return `${Number.isInteger(pct) ? pct : pct.toFixed(1)}%`;
}

// ————— Reading results —————

/** A message's text: a string, or the text parts of a content array; anything else as JSON. */
export function messageText(content: unknown): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) =>
        part && typeof part === 'object' && 'text' in part && typeof part.text === 'string' ? part.text : '',
      )
      .filter(Boolean)
      .join('\n');
  return JSON.stringify(content);
}

/** A reference as a person reads it: a string as it is, anything else as compact JSON; none is null. */
export function referenceText(reference: unknown): string | null {
  if (reference === undefined || reference === null) return null;
  return typeof reference === 'string' ? reference : JSON.stringify(reference);
}

/** The prompt's parts the playground can take: the system message and the last user (or tool) message. */
export function promptParts(messages: readonly EvalMessage[]): {
  system: string | null;
  prompt: string;
  /** Earlier turns the playground link leaves out (it opens one fresh turn). */
  earlierTurns: number;
} {
  const system = messages.find((m) => m.role === 'system');
  let last = -1;
  for (let i = messages.length - 1; i >= 0; i--)
    if (messages[i].role === 'user' || messages[i].role === 'tool') {
      last = i;
      break;
    }
  const turns = messages.filter((m, i) => m.role !== 'system' && i < last).length;
  return {
    system: system ? messageText(system.content) : null,
    prompt: last >= 0 ? messageText(messages[last].content) : '',
    earlierTurns: turns,
  };
}

/** `/playground?model=A&model=B&prompt=…[&system=…]`: that example's prompt, ready to send to both targets. */
export function playgroundLink(targets: readonly string[], messages: readonly EvalMessage[]): string {
  const { system, prompt } = promptParts(messages);
  const params = new URLSearchParams();
  for (const t of targets) params.append('model', t);
  params.set('prompt', prompt.slice(0, MAX_PREFILL_CHARS));
  if (system) params.set('system', system.slice(0, MAX_PREFILL_CHARS));
  return `/playground?${params}`;
}

export interface TargetMarks {
  target: string;
  /** The samples' outputs in sample order. */
  outputs: ResultOutput[];
  /** Per scorer: how many samples passed, of how many were scored. */
  marks: { scorer: string; passed: number; scored: number }[];
  /** The mean score over scorers and samples (null: nothing scored yet). */
  mean: number | null;
}

/** One example's row: per target, its outputs and per-scorer pass counts (a sample passes at a score ≥ 0.5). */
export function exampleMarks(row: ResultRow, targets: readonly string[], scorers: readonly string[]): TargetMarks[] {
  return targets.map((target) => {
    const outputs = row.outputs.filter((o) => o.target === target).sort((a, b) => a.sample - b.sample);
    const scores: number[] = [];
    const marks = scorers.map((scorer) => {
      let passed = 0;
      let scored = 0;
      for (const o of outputs) {
        const s = o.scores[scorer];
        if (!s || s.score === null) continue;
        scored++;
        scores.push(s.score);
        if (s.passed ?? s.score >= 0.5) passed++;
      }
      return { scorer, passed, scored };
    });
    return {
      target,
      outputs,
      marks,
      mean: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null,
    };
  });
}

/** The results page's query string: the filter only with two distinct targets (the API refuses it otherwise). */
export function resultsQuery(opts: {
  limit: number;
  after?: string | null;
  filter: ResultFilter;
  a: string | null;
  b: string | null;
}): string {
  const params = new URLSearchParams({ limit: String(opts.limit) });
  if (opts.after) params.set('after', opts.after);
  if (opts.filter !== 'all' && opts.a && opts.b && opts.a !== opts.b) {
    params.set('filter', opts.filter);
    params.set('a', opts.a);
    params.set('b', opts.b);
  }
  return params.toString();
}

/** The two targets a regression filter starts from: the lowest and the highest step (else the first two). */
export function defaultPair(targets: readonly EvalTarget[]): [string, string] | null {
  if (targets.length < 2) return null;
  const stepped = targets
    .map((t) => ({ name: t.name, step: t.step ?? splitModelName(t.name).step }))
    .filter((t): t is { name: string; step: number } => t.step !== null);
  const model = stepped[0] && splitModelName(stepped[0].name).model;
  const same = stepped.filter((t) => splitModelName(t.name).model === model).sort((x, y) => x.step - y.step);
  if (same.length >= 2) return [same[0].name, same[same.length - 1].name];
  return [targets[0].name, targets[1].name];
}

// ————— Starting runs —————

export interface ScorerDraft {
  type: ScorerType;
  name: string;
  /** exact_match: normalize; contains: case_sensitive. */
  flag: boolean;
  pattern: string;
  flags: string;
  tolerance: string;
  relative: string;
  schema: string;
  model: string;
  rubric: string;
}

export function newScorerDraft(type: ScorerType): ScorerDraft {
  return {
    type,
    name: '',
    flag: type === 'exact_match',
    pattern: '',
    flags: '',
    tolerance: '',
    relative: '',
    schema: '',
    model: '',
    rubric: '',
  };
}

/** A stored scorer (an auto-eval setting, a run's) back into the form's draft; an unknown type is null. */
export function scorerDraftFrom(stored: { type: string; name?: string } & Record<string, unknown>): ScorerDraft | null {
  if (!(SCORER_TYPES as readonly string[]).includes(stored.type)) return null;
  const type = stored.type as ScorerType;
  const draft = newScorerDraft(type);
  const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
  // A name equal to the type is the default the server filled in: left empty, as the form started.
  if (stored.name && stored.name !== type) draft.name = stored.name;
  if (type === 'exact_match') draft.flag = stored.normalize !== false;
  if (type === 'contains') draft.flag = stored.case_sensitive === true;
  draft.pattern = str(stored.pattern);
  draft.flags = str(stored.flags);
  draft.tolerance = str(stored.tolerance);
  draft.relative = str(stored.relative);
  draft.schema = stored.schema !== undefined ? JSON.stringify(stored.schema, null, 2) : '';
  draft.model = str(stored.model);
  draft.rubric = str(stored.rubric);
  return draft;
}

export interface RunDraft {
  evalSetId: string;
  targets: string[];
  scorers: ScorerDraft[];
  temperature: string;
  maxTokens: string;
  n: string;
  name: string;
}

/** What the run form sends; field errors are keyed as the API's 422 `loc` (`scorers.1.pattern`), so both land alike. */
export type RunBody = {
  eval_set_id: string;
  targets: string[];
  scorers: Record<string, unknown>[];
  sampling: { temperature: number; max_tokens: number };
  n: number;
  name?: string;
};

function numberOrError(text: string, opts: { min: number; max?: number; int?: boolean }, what: string) {
  const trimmed = text.trim();
  const value = Number(trimmed);
  if (trimmed === '' || !Number.isFinite(value)) return { error: `${what} must be a number` };
  if (opts.int && !Number.isInteger(value)) return { error: `${what} must be a whole number` };
  if (value < opts.min || (opts.max !== undefined && value > opts.max))
    return {
      error:
        opts.max === undefined ? `${what} must be at least ${opts.min}` : `${what} must be ${opts.min}–${opts.max}`,
    };
  return { value };
}

/** One scorer's body, or its field errors (keys without the `scorers.N.` prefix). */
export function scorerBody(draft: ScorerDraft): { body?: Record<string, unknown>; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const body: Record<string, unknown> = { type: draft.type };
  const name = draft.name.trim();
  if (name) {
    if (!SCORER_NAME.test(name)) errors.name = 'Use 1–40 lower-case letters, digits, "_" or "-"';
    body.name = name;
  }
  switch (draft.type) {
    case 'exact_match':
      body.normalize = draft.flag;
      break;
    case 'contains':
      body.case_sensitive = draft.flag;
      break;
    case 'regex':
      if (draft.pattern === '') errors.pattern = 'Enter a pattern';
      else {
        try {
          // {reference} is filled in per example on the server; a placeholder stands in for the check here.
          new RegExp(draft.pattern.replaceAll('{reference}', 'x'), draft.flags.trim());
        } catch (error) {
          errors.pattern = `Does not compile: ${error instanceof Error ? error.message : String(error)}`;
        }
      }
      body.pattern = draft.pattern;
      if (draft.flags.trim()) body.flags = draft.flags.trim();
      break;
    case 'numeric':
      for (const key of ['tolerance', 'relative'] as const) {
        if (draft[key].trim() === '') continue;
        const n = numberOrError(draft[key], { min: 0 }, key === 'tolerance' ? 'Tolerance' : 'Relative tolerance');
        if (n.error) errors[key] = n.error;
        else body[key] = n.value;
      }
      break;
    case 'json_schema': {
      try {
        const schema: unknown = JSON.parse(draft.schema);
        if (!schema || typeof schema !== 'object' || Array.isArray(schema))
          errors.schema = 'The schema must be a JSON object';
        body.schema = schema;
      } catch {
        errors.schema = draft.schema.trim() ? 'The schema is not valid JSON' : 'Enter a JSON schema';
      }
      break;
    }
    case 'judge':
      if (!draft.model.trim()) errors.model = 'Pick the judge model';
      if (!draft.rubric.trim()) errors.rubric = 'Write the rubric the judge answers';
      body.model = draft.model.trim();
      body.rubric = draft.rubric;
      break;
  }
  return Object.keys(errors).length ? { errors } : { body, errors };
}

/** What a run and a model's auto-eval share: the set, the scorers, sampling and n. */
export type EvalSettings = Pick<RunBody, 'eval_set_id' | 'scorers' | 'sampling' | 'n'>;

/** The settings' body, or errors keyed like the API's (`scorers.0.pattern`, `sampling.temperature`, `n`). */
export function buildEvalSettings(draft: Omit<RunDraft, 'targets' | 'name'>): {
  body?: EvalSettings;
  errors: Record<string, string>;
} {
  const errors: Record<string, string> = {};
  if (!draft.evalSetId) errors.eval_set_id = 'Pick an eval set';
  if (draft.scorers.length === 0) errors.scorers = 'Add at least one scorer';
  else if (draft.scorers.length > MAX_SCORERS) errors.scorers = `At most ${MAX_SCORERS} scorers`;
  const scorers: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  draft.scorers.forEach((s, i) => {
    const { body, errors: own } = scorerBody(s);
    for (const [k, v] of Object.entries(own)) errors[`scorers.${i}.${k}`] = v;
    const name = s.name.trim() || s.type;
    if (seen.has(name) && !own.name)
      errors[`scorers.${i}.name`] = `Another scorer is named "${name}": give this one its own name`;
    seen.add(name);
    if (body) scorers.push(body);
  });
  const temperature = numberOrError(draft.temperature, { min: 0, max: 2 }, 'Temperature');
  if (temperature.error) errors['sampling.temperature'] = temperature.error;
  const maxTokens = numberOrError(draft.maxTokens, { min: 1, max: 32768, int: true }, 'Max tokens');
  if (maxTokens.error) errors['sampling.max_tokens'] = maxTokens.error;
  const n = numberOrError(draft.n, { min: 1, max: MAX_SAMPLES, int: true }, 'Samples');
  if (n.error) errors.n = n.error;
  if (Object.keys(errors).length) return { errors };
  return {
    body: {
      eval_set_id: draft.evalSetId,
      scorers,
      sampling: { temperature: temperature.value!, max_tokens: maxTokens.value! },
      n: n.value!,
    },
    errors,
  };
}

/** The run form's body, or its errors keyed like the API's (`targets`, `scorers.0.pattern`, `sampling.temperature`). */
export function buildRunBody(draft: RunDraft): { body?: RunBody; errors: Record<string, string> } {
  const { body: settings, errors } = buildEvalSettings(draft);
  if (draft.targets.length === 0) errors.targets = 'Pick at least one checkpoint or model';
  else if (draft.targets.length > MAX_TARGETS) errors.targets = `At most ${MAX_TARGETS} targets`;
  if (!settings || Object.keys(errors).length) return { errors };
  return {
    body: {
      eval_set_id: settings.eval_set_id,
      targets: draft.targets,
      scorers: settings.scorers,
      sampling: settings.sampling,
      n: settings.n,
      ...(draft.name.trim() ? { name: draft.name.trim() } : {}),
    },
    errors,
  };
}

/** Keys the run form has a place for; a 422 about anything else is shown in the form-wide line. */
const PLACED =
  /^(eval_set_id|targets|scorers|scorers\.\d+\.(type|name|pattern|flags|tolerance|relative|schema|model|rubric)|sampling\.(temperature|max_tokens)|n|name)$/;

/**
 * A refused run's 422 errors, moved onto the form's fields: `targets.1` (an unknown model) onto the target list with
 * the index kept in the text, a whole scorer (`scorers.2`) onto its type; the rest into `form`, each with its key.
 */
export function placeRunErrors(fieldErrors: Readonly<Record<string, string>>): {
  fields: Record<string, string>;
  form: string[];
} {
  const fields: Record<string, string> = {};
  const form: string[] = [];
  for (const [key, msg] of Object.entries(fieldErrors)) {
    let to = key;
    const target = /^targets\.(\d+)/.exec(key);
    if (target) to = 'targets';
    else if (/^scorers\.\d+$/.test(key)) to = `${key}.type`;
    else if (/^scorers\.\d+\./.test(key) && !PLACED.test(key)) to = `${key.split('.').slice(0, 2).join('.')}.type`;
    else if (key.startsWith('sampling.') && !PLACED.test(key)) to = '';
    if (to && PLACED.test(to)) {
      const text = target ? `Target ${Number(target[1]) + 1}: ${msg}` : to !== key ? `${key}: ${msg}` : msg;
      fields[to] = fields[to] ? `${fields[to]}; ${text}` : text;
    } else form.push(key ? `${key}: ${msg}` : msg);
  }
  return { fields, form };
}
