import { z } from 'zod';
import { zodIssuesToValidation } from '@/lib/errors/zod-issues';
import { chatCompletionRequestSchema, structuredOutputsSchema, type ChatCompletionRequest } from '@/lib/schemas/chat';
import { requestError } from '../chat-errors';
import { pyStr, pyTruthy } from '../python-repr';
import { structuredOutputKindsError } from './structured-output';

/** Phase 1 of the chat-request checks (see index.ts for the whole order): the body alone, no model needed. */

export type ChatRequest = ChatCompletionRequest;

/** A JSON number as Python compares it (bool is an int there); anything else skips the numeric validator. */
function pyNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * vLLM's `@model_validator(mode="before")` checks, in the order docs/contract.md §8.2 lists them. They run on the raw body
 * before field validation, so they see values as sent and use Python truthiness (`{}` stream_options
 * passes, `top_logprobs: 0` is skipped). A value of the wrong type is left to the schema.
 */
function runRequestValidators(raw: Record<string, unknown>): void {
  if (pyTruthy(raw.stream_options) && !pyTruthy(raw.stream)) {
    throw requestError('Stream options can only be defined when `stream=True`.', 'stream_options');
  }

  const promptLogprobs = pyNumber(raw.prompt_logprobs);
  if (promptLogprobs !== undefined) {
    if (pyTruthy(raw.stream) && (promptLogprobs > 0 || promptLogprobs === -1)) {
      throw requestError('`prompt_logprobs` are not available when `stream=True`.', 'prompt_logprobs');
    }
    if (promptLogprobs < 0 && promptLogprobs !== -1) {
      throw requestError('`prompt_logprobs` must be a positive value or -1.', 'prompt_logprobs');
    }
  }
  const topLogprobs = pyNumber(raw.top_logprobs);
  if (topLogprobs !== undefined && topLogprobs !== 0) {
    if (topLogprobs < 0 && topLogprobs !== -1) {
      throw requestError('`top_logprobs` must be a positive value or -1.', 'top_logprobs');
    }
    if ((topLogprobs === -1 || topLogprobs > 0) && !pyTruthy(raw.logprobs)) {
      throw requestError('when using `top_logprobs`, `logprobs` must be set to true.', 'top_logprobs');
    }
  }

  const so = raw.structured_outputs;
  if (isPlainObject(so)) {
    const count = (['json', 'regex', 'choice'] as const).filter((k) => so[k] !== undefined && so[k] !== null).length;
    if (count > 1) {
      throw requestError(
        "You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').",
        'structured_outputs',
      );
    }
  }

  // docs/contract.md §8.12: absent tool_choice (parse tool calls when tools are given), null and "none" pass; vLLM's
  // auto/required/named choices are refused with its wording, adapted.
  const toolChoice = raw.tool_choice;
  if (toolChoice !== undefined && toolChoice !== null && toolChoice !== 'none') {
    if (raw.tools === undefined || raw.tools === null) {
      throw requestError('When using `tool_choice`, `tools` must be set.', 'tool_choice');
    }
    throw requestError(
      `Invalid value for \`tool_choice\`: ${pyStr(toolChoice)}! Only "none" is supported.`,
      'tool_choice',
    );
  }

  // add_generation_prompt defaults to true, so continue_final_message alone fails (docs/contract.md §8.1).
  const addGenerationPrompt = 'add_generation_prompt' in raw ? raw.add_generation_prompt : true;
  if (pyTruthy(raw.continue_final_message) && pyTruthy(addGenerationPrompt)) {
    throw requestError(
      'Cannot set both `continue_final_message` and `add_generation_prompt` to True.',
      'continue_final_message',
    );
  }

  const salt = raw.cache_salt;
  if (salt !== undefined && salt !== null && (typeof salt !== 'string' || salt === '')) {
    throw requestError("Parameter 'cache_salt' must be a non-empty string if provided.", 'cache_salt');
  }
}

const FIELD_ORDER = Object.keys(chatCompletionRequestSchema.shape);

function schemaError(error: z.ZodError): never {
  const issue = error.issues[0];
  const param = typeof issue.path[0] === 'string' ? issue.path[0] : null;
  // Our pydantic-style primitives and refinements carry their final text; zod's own issues are translated.
  const message =
    issue.code === 'custom'
      ? issue.message
      : (zodIssuesToValidation(new z.ZodError([issue]), 'body')[0]?.msg ?? issue.message);
  throw requestError(message, param);
}

/**
 * Phase 1 (docs/contract.md §8.2 order item 1): vLLM's request validators on the raw body, then the schema. Needs no model.
 * Throws 400 `Bad Request`. The result is the parsed body with unknown keys dropped and plain defaults set.
 */
export function parseChatRequest(rawJsonBody: unknown): ChatRequest {
  if (!isPlainObject(rawJsonBody)) {
    throw requestError('Input should be a valid dictionary or object to extract fields from', null);
  }
  runRequestValidators(rawJsonBody);
  const parsed = chatCompletionRequestSchema.safeParse(rawJsonBody, { reportInput: true });
  // vLLM's dataclass raises while its field is validated, so the error takes that field's place among the
  // schema errors (pydantic reports fields in declaration order; the schema keeps vLLM's order).
  const so = structuredOutputsSchema.safeParse(rawJsonBody.structured_outputs);
  const kindsError = so.success && so.data ? structuredOutputKindsError(so.data) : null;
  if (!parsed.success) {
    const first = parsed.error.issues[0]?.path[0];
    const before = typeof first === 'string' && FIELD_ORDER.indexOf(first) < FIELD_ORDER.indexOf('structured_outputs');
    if (kindsError && !before) throw kindsError;
    schemaError(parsed.error);
  }
  if (kindsError) throw kindsError;
  return parsed.data;
}
