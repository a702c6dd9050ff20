import type { z } from 'zod';
import { createRlJobBodySchema, logBodySchema, type TrajectoryGroup } from '@/lib/schemas/trajectory-input';
import { validateJsonBody, type BodyFlavor } from './parse';

/**
 * A trajectory group split for storage: `json` is the group exactly as it is stored (the UTF-8 bytes of
 * JSON.stringify's text), `light` the same group without its messages, which is all the metrics and summaries
 * read (rewards, metrics, exception count). The heavy part never becomes objects, or even a string, on the
 * request thread: bytes cross from the body thread without a copy and go to the database as they are.
 */
export interface PreparedGroup {
  light: TrajectoryGroup;
  json: Uint8Array;
  /** What the group's completions did, read while the messages are at hand (lib/services/length-pinning.ts). */
  completions: CompletionCounts;
}

/**
 * The completions (choices) of a batch: how many, how many stopped at the token limit (`finish_reason: "length"`),
 * and the token counts of those that carry logprobs (one entry per sampled token). The server judges length pinning
 * from these, whatever the user named their metrics.
 */
export interface CompletionCounts {
  n: number;
  length: number;
  tokenN: number;
  tokenSum: number;
  tokenMax: number;
}

export function emptyCompletionCounts(): CompletionCounts {
  return { n: 0, length: 0, tokenN: 0, tokenSum: 0, tokenMax: 0 };
}

const encoder = new TextEncoder();

export function prepareGroup(group: TrajectoryGroup): PreparedGroup {
  return {
    light: lightGroup(group),
    json: encoder.encode(JSON.stringify(group)),
    completions: countCompletions(group, emptyCompletionCounts()),
  };
}

/** A choice (ART's Choice: finish_reason, message, logprobs) among messages_and_choices; messages have no finish_reason. */
export function countCompletions(group: TrajectoryGroup, into: CompletionCounts): CompletionCounts {
  for (const t of group.trajectories) {
    for (const item of t.messages_and_choices) {
      const choice = item as { finish_reason?: unknown; logprobs?: { content?: unknown } | null };
      if (typeof choice.finish_reason !== 'string') continue;
      into.n += 1;
      if (choice.finish_reason === 'length') into.length += 1;
      const tokens = choice.logprobs?.content;
      if (Array.isArray(tokens)) {
        into.tokenN += 1;
        into.tokenSum += tokens.length;
        into.tokenMax = Math.max(into.tokenMax, tokens.length);
      }
    }
  }
  return into;
}

export interface PreparedLogBody {
  split: string;
  groups: PreparedGroup[];
}

function lightGroup(group: TrajectoryGroup): TrajectoryGroup {
  return {
    trajectories: group.trajectories.map((t) => ({ messages_and_choices: [], reward: t.reward, metrics: t.metrics })),
    exceptions: group.exceptions,
    metrics: group.metrics,
  };
}

export function prepareLogBody(body: z.output<typeof logBodySchema>): PreparedLogBody {
  return {
    split: body.split,
    groups: body.trajectory_groups.map(prepareGroup),
  };
}

export interface PreparedRlJobBody extends Omit<z.output<typeof createRlJobBodySchema>, 'trajectory_groups'> {
  groups: PreparedGroup[];
}

export function prepareRlJobBody(body: z.output<typeof createRlJobBodySchema>): PreparedRlJobBody {
  const { trajectory_groups, ...rest } = body;
  return { ...rest, groups: trajectory_groups.map(prepareGroup) };
}

/**
 * Bodies that can be parsed, checked and prepared off the request thread (lib/api/body-offload.ts runs them on a
 * worker thread when they are large; small ones run the same function inline). Each kind names its schema, its
 * NUL rule and the function that turns the validated body into what the handler stores: a worker thread cannot
 * receive a zod schema or a function, only this name.
 */
export const BODY_KINDS = {
  log: { schema: logBodySchema, nulAllowedUnder: ['trajectory_groups'], prepare: prepareLogBody },
  'rl-job': { schema: createRlJobBodySchema, nulAllowedUnder: ['trajectory_groups'], prepare: prepareRlJobBody },
} as const;

export type BodyKind = keyof typeof BODY_KINDS;
export type Prepared<K extends BodyKind> = ReturnType<(typeof BODY_KINDS)[K]['prepare']>;

/** The buffers of a prepared body, handed to the request thread without copying them. */
export function transferables(prepared: Prepared<BodyKind>): ArrayBuffer[] {
  return prepared.groups.map((g) => g.json.buffer as ArrayBuffer);
}

export function prepareBody<K extends BodyKind>(kind: K, text: string, flavor: BodyFlavor): Prepared<K> {
  const spec = BODY_KINDS[kind];
  const body = validateJsonBody(spec.schema, text, { flavor, nulAllowedUnder: [...spec.nulAllowedUnder] });
  // TypeScript sees the union of every kind's prepare; this kind's schema made exactly its input.
  const prepare = spec.prepare as (input: unknown) => Prepared<K>;
  return prepare(body);
}
