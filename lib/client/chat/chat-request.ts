import { CHAT_REQUEST_FIELDS } from '@/lib/schemas/chat-fields';

/**
 * The playground's settings as the user types them (strings, so that a half-typed "0." is not lost),
 * and the one function that turns them into the chat request body. The same body is sent and exported
 * as code, so "export code" reproduces exactly what ran.
 */

export type PlaygroundRole = 'system' | 'user' | 'assistant';

export interface PlaygroundMessage {
  role: PlaygroundRole;
  content: string;
}

export type ResponseFormatKind = 'text' | 'json_object' | 'json_schema';

export interface ChatParams {
  temperature: string;
  top_p: string;
  top_k: string;
  min_p: string;
  max_tokens: string;
  presence_penalty: string;
  frequency_penalty: string;
  repetition_penalty: string;
  seed: string;
  /** One stop sequence per line; escapes like \n are not interpreted (what you type is what is sent). */
  stop: string;
  n: string;
  logprobs: boolean;
  top_logprobs: string;
  response_format: ResponseFormatKind;
  /** The JSON schema text for `json_schema`. */
  json_schema: string;
}

export const DEFAULT_PARAMS: ChatParams = {
  temperature: '0.7',
  top_p: '1',
  top_k: '',
  min_p: '',
  max_tokens: '128',
  presence_penalty: '',
  frequency_penalty: '',
  repetition_penalty: '',
  seed: '',
  stop: '',
  n: '1',
  logprobs: true,
  top_logprobs: '5',
  response_format: 'text',
  json_schema:
    '{\n  "type": "object",\n  "properties": {\n    "answer": { "type": "string" }\n  },\n  "required": ["answer"]\n}',
};

/** The request body the playground sends; keys appear only when set, in a stable order. */
export interface PlaygroundRequest {
  model: string;
  messages: PlaygroundMessage[];
  stream: true;
  stream_options: { include_usage: true };
  temperature?: number;
  top_p?: number;
  top_k?: number;
  min_p?: number;
  max_tokens?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  repetition_penalty?: number;
  seed?: number;
  stop?: string[];
  n?: number;
  logprobs?: boolean;
  top_logprobs?: number;
  response_format?:
    { type: 'json_object' } | { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown> } };
  /** vLLM answers `token_id:N` by default on this server; readable text is what a person wants to see. */
  return_tokens_as_token_ids: false;
}

export type ParamErrors = Partial<Record<keyof ChatParams, string>>;

interface NumberRule {
  int?: boolean;
  min?: number;
  max?: number;
}

// Ranges are vLLM's own (docs/contract.md §8): catching them here saves a round trip and names the field.
const NUMBER_RULES: Record<
  | 'temperature'
  | 'top_p'
  | 'top_k'
  | 'min_p'
  | 'max_tokens'
  | 'presence_penalty'
  | 'frequency_penalty'
  | 'repetition_penalty'
  | 'seed'
  | 'n'
  | 'top_logprobs',
  NumberRule
> = {
  temperature: { min: 0, max: 2 },
  top_p: { min: 0, max: 1 },
  top_k: { int: true, min: -1 },
  min_p: { min: 0, max: 1 },
  max_tokens: { int: true, min: 1 },
  presence_penalty: { min: -2, max: 2 },
  frequency_penalty: { min: -2, max: 2 },
  repetition_penalty: { min: 0.01, max: 2 },
  seed: { int: true, min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER },
  n: { int: true, min: 1, max: 8 },
  top_logprobs: { int: true, min: 0, max: 20 },
};

function readNumber(raw: string, rule: NumberRule): { value?: number; error?: string } {
  const text = raw.trim();
  if (text === '') return {};
  const value = Number(text);
  if (!Number.isFinite(value)) return { error: 'Must be a number' };
  if (rule.int && !Number.isInteger(value)) return { error: 'Must be a whole number' };
  if (rule.min !== undefined && value < rule.min) return { error: `Must be at least ${rule.min}` };
  if (rule.max !== undefined && value > rule.max) return { error: `Must be at most ${rule.max}` };
  return { value };
}

/** Parses the JSON schema editor's text: an object, or the reason it is not one. */
export function parseJsonSchemaText(text: string): { schema: Record<string, unknown> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `Not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { error: 'The schema must be a JSON object' };
  return { schema: value as Record<string, unknown> };
}

export function validateParams(params: ChatParams): ParamErrors {
  const errors: ParamErrors = {};
  for (const [key, rule] of Object.entries(NUMBER_RULES) as [keyof typeof NUMBER_RULES, NumberRule][]) {
    const { error } = readNumber(params[key], rule);
    if (error) errors[key] = error;
  }
  if (params.response_format === 'json_schema') {
    const parsed = parseJsonSchemaText(params.json_schema);
    if ('error' in parsed) errors.json_schema = parsed.error;
  }
  return errors;
}

export function stopSequences(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

/**
 * The body for one model. Empty fields are left out so that the server's default applies (and the
 * exported code shows only what was chosen). Call `validateParams` first: invalid numbers are dropped.
 */
export function buildChatRequest(model: string, messages: PlaygroundMessage[], params: ChatParams): PlaygroundRequest {
  const body: PlaygroundRequest = {
    model,
    messages: messages.map((m) => ({ role: m.role, content: m.content })),
    stream: true,
    stream_options: { include_usage: true },
    return_tokens_as_token_ids: false,
  };
  for (const key of Object.keys(NUMBER_RULES) as (keyof typeof NUMBER_RULES)[]) {
    if (key === 'top_logprobs') continue;
    const { value } = readNumber(params[key], NUMBER_RULES[key]);
    if (value !== undefined) body[key] = value;
  }
  const stop = stopSequences(params.stop);
  if (stop.length > 0) body.stop = stop;
  if (params.logprobs) {
    body.logprobs = true;
    const { value } = readNumber(params.top_logprobs, NUMBER_RULES.top_logprobs);
    if (value !== undefined && value > 0) body.top_logprobs = value;
  }
  if (params.response_format === 'json_object') body.response_format = { type: 'json_object' };
  if (params.response_format === 'json_schema') {
    const parsed = parseJsonSchemaText(params.json_schema);
    if ('schema' in parsed)
      body.response_format = { type: 'json_schema', json_schema: { name: 'response', schema: parsed.schema } };
  }
  // Re-create the object in a fixed key order (the shared field list's): the exported code then reads the same way
  // every time.
  const ordered = {} as Record<string, unknown>;
  for (const key of Object.keys(CHAT_REQUEST_FIELDS) as (keyof PlaygroundRequest)[])
    if (body[key] !== undefined) ordered[key] = body[key];
  return ordered as unknown as PlaygroundRequest;
}

/** A seed for a fresh playground: shown in the field, sent with every request, so each run can be repeated. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}
