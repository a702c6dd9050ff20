/**
 * Every field of the chat completions request (chatCompletionRequestSchema in chat.ts, whose keys chat-fields.test.ts
 * holds this list to), `true` where the openai SDKs have a named parameter for it (the rest are vLLM extensions, which
 * exported code passes in `extra_body`). The playground's fields come first, in the order it writes a request body
 * (lib/client/chat/chat-request.ts), so that exported code reads the same way every time. A list of its own, without zod:
 * the playground loads it, and the schema would add kilobytes to a page at its first-load budget.
 */
export const CHAT_REQUEST_FIELDS = {
  model: true,
  messages: true,
  temperature: true,
  top_p: true,
  top_k: false,
  min_p: false,
  max_tokens: true,
  presence_penalty: true,
  frequency_penalty: true,
  repetition_penalty: false,
  seed: true,
  stop: true,
  n: true,
  logprobs: true,
  top_logprobs: true,
  response_format: true,
  stream: true,
  stream_options: true,
  return_tokens_as_token_ids: false,
  logit_bias: true,
  max_completion_tokens: true,
  tools: true,
  tool_choice: true,
  reasoning_effort: false,
  include_reasoning: false,
  parallel_tool_calls: false,
  user: true,
  use_beam_search: false,
  length_penalty: false,
  stop_token_ids: false,
  include_stop_str_in_output: false,
  ignore_eos: false,
  min_tokens: false,
  skip_special_tokens: false,
  spaces_between_special_tokens: false,
  truncate_prompt_tokens: false,
  prompt_logprobs: false,
  allowed_token_ids: false,
  bad_words: false,
  echo: false,
  add_generation_prompt: false,
  continue_final_message: false,
  add_special_tokens: false,
  documents: false,
  chat_template: false,
  chat_template_kwargs: false,
  mm_processor_kwargs: false,
  structured_outputs: false,
  priority: false,
  request_id: false,
  logits_processors: false,
  return_token_ids: false,
  cache_salt: false,
  kv_transfer_params: false,
  engine_xargs: false,
  vllm_xargs: false,
} as const satisfies Record<string, boolean>;

export type ChatRequestField = keyof typeof CHAT_REQUEST_FIELDS;

/** Whether the openai SDKs name this field (false for vLLM extensions and for anything that is not a field). */
export function isOpenAiSdkField(key: string): boolean {
  return Object.hasOwn(CHAT_REQUEST_FIELDS, key) && CHAT_REQUEST_FIELDS[key as ChatRequestField];
}
