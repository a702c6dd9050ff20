import { z } from 'zod';

/*
 * POST /v1/chat/completions: the wire contract of vLLM's OpenAI-compatible server, v0.11–v0.15 era
 * (service-interface.md field table, docs/contract.md §8). Nullability follows vLLM's pydantic model: `Optional[...]`
 * fields take null as "default", plain `bool`/`int` fields (echo, min_tokens, priority…) reject it.
 * Unknown keys are ignored at every level (docs/contract.md §1.4). Request validators that vLLM runs before field
 * validation, and every check needing the model, live in lib/inference/chat-request/.
 */

// ---- pydantic-flavoured primitives ---------------------------------------------------------------
// JSON has one number type; pydantic's int/float fields differ in what they accept and in the error
// text (`Input should be a valid integer, got a number with a fractional part`). z.int() would also
// cap at 2^53, while vLLM takes any int and reports ranges itself (seed, out-of-vocab ids).

function intError(input: unknown): string {
  if (input === undefined) return 'Field required';
  if (typeof input === 'number') return 'Input should be a valid integer, got a number with a fractional part';
  if (typeof input === 'string') return 'Input should be a valid integer, unable to parse string as an integer';
  return 'Input should be a valid integer';
}

function floatError(input: unknown): string {
  if (input === undefined) return 'Field required';
  if (typeof input === 'string') return 'Input should be a valid number, unable to parse string as a number';
  return 'Input should be a valid number';
}

/** A pydantic `int`: any integral JSON number (also beyond 2^53). */
export const pyIntSchema = () =>
  z
    .custom<number>((v) => typeof v === 'number' && Number.isInteger(v), { error: (iss) => intError(iss.input) })
    .meta({ type: 'integer' });

/** A pydantic `float`: any JSON number. */
export const pyFloatSchema = () =>
  z.custom<number>((v) => typeof v === 'number', { error: (iss) => floatError(iss.input) }).meta({ type: 'number' });

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * `seed`: pydantic `Field(ge=-2**63, le=2**63-1)`. JSON numbers past 2^53 arrive rounded, and 2^63−1 itself
 * rounds up to 2^63, so exactly 2^63 is accepted (and read as 2^63−1 by the normaliser).
 */
const seedSchema = pyIntSchema()
  .superRefine((v, ctx) => {
    const big = BigInt(v);
    if (big < INT64_MIN)
      ctx.addIssue({ code: 'custom', message: `Input should be greater than or equal to ${INT64_MIN}` });
    else if (big > INT64_MAX + 1n) {
      ctx.addIssue({ code: 'custom', message: `Input should be less than or equal to ${INT64_MAX}` });
    }
  })
  .meta({ type: 'integer', minimum: Number(INT64_MIN), maximum: Number(INT64_MAX) });

const truncateSchema = pyIntSchema()
  .superRefine((v, ctx) => {
    if (v < -1) ctx.addIssue({ code: 'custom', message: 'Input should be greater than or equal to -1' });
  })
  .meta({ type: 'integer', minimum: -1 });

const jsonObject = () => z.record(z.string(), z.unknown());

// ---- messages and tools ----------------------------------------------------------------------------

export const chatContentPartSchema = z.looseObject({
  type: z.string(),
  text: z.string().nullish(),
});

const messageToolCallSchema = z.looseObject({
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

/** Any role is accepted (developer, system, user, assistant, tool, function or a custom one, docs/contract.md §8.1). */
export const chatMessageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(chatContentPartSchema)]).nullish(),
  name: z.string().nullish(),
  tool_calls: z.array(messageToolCallSchema).nullish(),
  tool_call_id: z.string().nullish(),
  reasoning: z.string().nullish(),
  reasoning_content: z.string().nullish(),
});
export type ChatMessage = z.infer<typeof chatMessageSchema>;

export const chatToolSchema = z.looseObject({
  type: z.literal('function').default('function'),
  function: z.looseObject({
    name: z.string(),
    description: z.string().nullish(),
    parameters: jsonObject().nullish(),
  }),
});
export type ChatTool = z.infer<typeof chatToolSchema>;

// ---- structured outputs (docs/contract.md §8.11) ------------------------------------------------------------------

export const STRUCTURED_OUTPUT_KINDS = ['json', 'regex', 'choice', 'grammar', 'json_object', 'structural_tag'] as const;
export type StructuredOutputKind = (typeof STRUCTURED_OUTPUT_KINDS)[number];

export const structuredOutputsSchema = z
  .looseObject({
    json: z.union([z.string(), jsonObject()]).nullish(),
    regex: z.string().nullish(),
    choice: z.array(z.string()).nullish(),
    grammar: z.string().nullish(),
    json_object: z.boolean().nullish(),
    disable_fallback: z.boolean().default(false),
    disable_any_whitespace: z.boolean().default(false),
    disable_additional_properties: z.boolean().default(false),
    whitespace_pattern: z.string().nullish(),
    structural_tag: z.string().nullish(),
    _backend: z.string().nullish().describe('Accepted and ignored'),
    _backend_was_auto: z.boolean().default(false).describe('Accepted and ignored'),
  })
  .describe('One constraint kind at most: json, regex, choice, grammar, json_object or structural_tag');
export type StructuredOutputs = z.infer<typeof structuredOutputsSchema>;

export const JSON_SCHEMA_REQUIRED_MESSAGE =
  "When response_format type is 'json_schema', the 'json_schema' field must be provided.";

export const responseFormatSchema = z
  .looseObject({
    type: z.enum(['text', 'json_object', 'json_schema', 'structural_tag']),
    json_schema: z
      .looseObject({
        name: z.string(),
        description: z.string().nullish(),
        schema: jsonObject().nullish(),
        strict: z.boolean().nullish(),
      })
      .nullish(),
  })
  .superRefine((v, ctx) => {
    if (v.type === 'json_schema' && v.json_schema == null) {
      ctx.addIssue({ code: 'custom', message: JSON_SCHEMA_REQUIRED_MESSAGE });
    }
  });
export type ResponseFormat = z.infer<typeof responseFormatSchema>;

export const streamOptionsSchema = z.looseObject({
  include_usage: z.boolean().nullable().default(true).describe('Defaults to true when stream_options is present'),
  continuous_usage_stats: z.boolean().nullable().default(false),
});

const xargValue = z.union([z.string(), pyFloatSchema()]);

const logitsProcessorSchema = z.union([
  z.string(),
  z.looseObject({ qualname: z.string(), args: z.array(z.unknown()).nullish(), kwargs: jsonObject().nullish() }),
]);

// ---- request ---------------------------------------------------------------------------------------

export const chatCompletionRequestSchema = z.object({
  messages: z.array(chatMessageSchema),
  model: z.string().nullish(),
  frequency_penalty: pyFloatSchema().nullish().describe('Default 0, range [-2, 2]'),
  logit_bias: z.record(z.string(), pyFloatSchema()).nullish().describe('Token id → bias, clamped to [-100, 100]'),
  logprobs: z.boolean().nullish().describe('Default false; logprobs are always returned (docs/contract.md §8.8)'),
  top_logprobs: pyIntSchema().nullish().describe('Default 0; at most 20'),
  max_tokens: pyIntSchema().nullish().describe('Deprecated; max_completion_tokens wins'),
  max_completion_tokens: pyIntSchema().nullish(),
  n: pyIntSchema().nullish().describe('Default 1, at most 128'),
  presence_penalty: pyFloatSchema().nullish().describe('Default 0, range [-2, 2]'),
  response_format: responseFormatSchema.nullish(),
  seed: seedSchema.nullish(),
  stop: z
    .union([z.string(), z.array(z.string())])
    .nullish()
    .describe('Default []'),
  stream: z.boolean().nullish(),
  stream_options: streamOptionsSchema.nullish(),
  temperature: pyFloatSchema().nullish(),
  top_p: pyFloatSchema().nullish(),
  tools: z.array(chatToolSchema).nullish(),
  tool_choice: z.literal('none').nullish().describe('Only "none" is supported; absent with tools parses tool calls'),
  reasoning_effort: z.enum(['low', 'medium', 'high']).nullish(),
  include_reasoning: z.boolean().default(true),
  parallel_tool_calls: z.boolean().nullish().describe('Default true'),
  user: z.string().nullish(),
  use_beam_search: z.boolean().default(false),
  top_k: pyIntSchema().nullish(),
  min_p: pyFloatSchema().nullish(),
  repetition_penalty: pyFloatSchema().nullish(),
  length_penalty: pyFloatSchema().default(1),
  stop_token_ids: z.array(pyIntSchema()).nullish(),
  include_stop_str_in_output: z.boolean().default(false),
  ignore_eos: z.boolean().default(false),
  min_tokens: pyIntSchema().default(0),
  skip_special_tokens: z.boolean().default(true),
  spaces_between_special_tokens: z.boolean().default(true),
  truncate_prompt_tokens: truncateSchema.nullish(),
  prompt_logprobs: pyIntSchema().nullish(),
  allowed_token_ids: z.array(pyIntSchema()).nullish(),
  bad_words: z.array(z.string()).default([]),
  echo: z.boolean().default(false),
  add_generation_prompt: z.boolean().default(true),
  continue_final_message: z.boolean().default(false),
  add_special_tokens: z.boolean().default(false),
  documents: z.array(z.record(z.string(), z.string())).nullish(),
  chat_template: z.string().nullish().describe('Always refused'),
  chat_template_kwargs: jsonObject().nullish(),
  mm_processor_kwargs: jsonObject().nullish(),
  structured_outputs: structuredOutputsSchema.nullish(),
  priority: pyIntSchema().default(0),
  request_id: z.string().optional().describe('Default: 32 random hex digits'),
  logits_processors: z.array(logitsProcessorSchema).nullish(),
  return_tokens_as_token_ids: z.boolean().nullish().describe('Default true on this server'),
  return_token_ids: z.boolean().nullish(),
  cache_salt: z.string().nullish(),
  kv_transfer_params: jsonObject().nullish(),
  engine_xargs: z.record(z.string(), z.union([xargValue, z.array(xargValue)])).nullish(),
  /** vLLM's own name of `engine_xargs`. */
  vllm_xargs: z.record(z.string(), z.union([xargValue, z.array(xargValue)])).nullish(),
});
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

const { $schema: _unusedDialect, ...requestJsonSchema } = z.toJSONSchema(chatCompletionRequestSchema, {
  io: 'input',
  unrepresentable: 'any',
}) as Record<string, unknown>;

/**
 * The `body` declaration for the chat route: it accepts any JSON value, because vLLM's request validators
 * run before field validation (docs/contract.md §8.2) — `parseChatRequest` in lib/inference does both — while the
 * OpenAPI document still shows `chatCompletionRequestSchema`.
 */
export const chatCompletionBodySchema = z.unknown().meta(requestJsonSchema);

// ---- responses (docs/contract.md §8.13, §8.14) ----------------------------------------------------------------------

export const chatTopLogprobSchema = z.object({
  token: z.string(),
  logprob: z.number(),
  bytes: z.array(z.int()).nullable(),
});

export const chatLogprobEntrySchema = z.object({
  token: z.string(),
  logprob: z.number(),
  bytes: z.array(z.int()).nullable(),
  top_logprobs: z.array(chatTopLogprobSchema),
});
export type ChatLogprobEntry = z.infer<typeof chatLogprobEntrySchema>;

export const chatChoiceLogprobsSchema = z.object({ content: z.array(chatLogprobEntrySchema).nullable() });
export type ChatChoiceLogprobs = z.infer<typeof chatChoiceLogprobsSchema>;

export const chatToolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string().describe('JSON text') }),
});
export type ChatToolCall = z.infer<typeof chatToolCallSchema>;

const stopReasonSchema = z.union([z.string(), z.int()]).nullable();

export const chatResponseMessageSchema = z.object({
  role: z.string(),
  content: z.string().nullable(),
  refusal: z.string().nullable(),
  annotations: z.array(jsonObject()).nullable(),
  audio: jsonObject().nullable(),
  function_call: z.object({ name: z.string(), arguments: z.string() }).nullable(),
  tool_calls: z.array(chatToolCallSchema),
  reasoning: z.string().nullable(),
  reasoning_content: z.string().nullable(),
});

export const FINISH_REASONS = ['stop', 'length', 'tool_calls', 'abort'] as const;
export type FinishReason = (typeof FINISH_REASONS)[number];

export const chatChoiceSchema = z.object({
  index: z.int(),
  message: chatResponseMessageSchema,
  logprobs: chatChoiceLogprobsSchema.nullable(),
  finish_reason: z.enum(FINISH_REASONS).nullable(),
  stop_reason: stopReasonSchema,
  token_ids: z.array(z.int()).nullable(),
});
export type ChatChoice = z.infer<typeof chatChoiceSchema>;

export const chatUsageSchema = z.object({
  prompt_tokens: z.int(),
  total_tokens: z.int(),
  completion_tokens: z.int(),
  prompt_tokens_details: z.object({ cached_tokens: z.int() }).nullable(),
});

export const promptLogprobSchema = z.record(
  z.string().describe('Token id'),
  z.object({ logprob: z.number(), rank: z.int().nullable(), decoded_token: z.string().nullable() }),
);
export type PromptLogprob = z.infer<typeof promptLogprobSchema>;

export const chatCompletionResponseSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.int(),
  model: z.string().describe('Echoes the request string as sent'),
  choices: z.array(chatChoiceSchema),
  service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority']).nullable(),
  system_fingerprint: z.string().nullable(),
  usage: chatUsageSchema,
  prompt_logprobs: z.array(promptLogprobSchema.nullable()).nullable(),
  prompt_token_ids: z.array(z.int()).nullable(),
  kv_transfer_params: jsonObject().nullable(),
});
export type ChatCompletionResponse = z.infer<typeof chatCompletionResponseSchema>;

export const chatDeltaToolCallSchema = z.object({
  index: z.int(),
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type ChatDeltaToolCall = z.infer<typeof chatDeltaToolCallSchema>;

/** Keys appear only where docs/contract.md §8.14 lists them, so every key here is optional. */
export const chatDeltaSchema = z.object({
  role: z.string().optional(),
  content: z.string().optional(),
  /** Text inside the think block, with a reasoning parser (docs/vllm-compat.md, "Reasoning outputs"). */
  reasoning: z.string().optional(),
  /** The same text under vLLM's older name, for clients that read that one. */
  reasoning_content: z.string().optional(),
  tool_calls: z.array(chatDeltaToolCallSchema).optional(),
});
export type ChatDelta = z.infer<typeof chatDeltaSchema>;

export const chatStreamChoiceSchema = z.object({
  index: z.int(),
  delta: chatDeltaSchema,
  logprobs: chatChoiceLogprobsSchema.nullable(),
  finish_reason: z.enum(FINISH_REASONS).nullable(),
  stop_reason: stopReasonSchema.optional(),
  token_ids: z.array(z.int()).nullable().optional(),
});
export type ChatStreamChoice = z.infer<typeof chatStreamChoiceSchema>;

export const chatStreamUsageSchema = z.object({
  prompt_tokens: z.int(),
  total_tokens: z.int(),
  completion_tokens: z.int(),
});

export const chatCompletionChunkSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.int(),
  model: z.string(),
  choices: z.array(chatStreamChoiceSchema),
  usage: chatStreamUsageSchema.optional(),
  prompt_token_ids: z.array(z.int()).nullable().optional(),
});
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;

export const chatErrorEnvelopeSchema = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.int() }),
});
