import { ApiError } from '@/lib/errors';

/**
 * The error classes of POST /v1/chat/completions (docs/contract.md §8.2). vLLM reports request-model problems
 * (schema, its pydantic request validators) as `Bad Request` and everything found later — sampling
 * parameters, engine ranges, context, template — as `BadRequestError`; clients see the `type` verbatim.
 */
export const REQUEST_ERROR_TYPE = 'Bad Request';
export const ENGINE_ERROR_TYPE = 'BadRequestError';

/** A schema error or a failed request validator (docs/contract.md §8.2 order item 1). */
export function requestError(message: string, param: string | null): ApiError {
  return new ApiError('bad_request', message, { param, type: REQUEST_ERROR_TYPE });
}

/** A sampling-parameter, context, template or engine-range error (docs/contract.md §8.2 order items 3–6). */
export function engineError(message: string, param: string | null): ApiError {
  return new ApiError('bad_request', message, { param, type: ENGINE_ERROR_TYPE });
}

/** Unknown model or checkpoint: vLLM's 404 text with the model string exactly as sent (docs/contract.md §7 item 5, §1.5). */
export function modelNotFoundError(model: string): ApiError {
  return new ApiError('not_found', `The model \`${model}\` does not exist.`, { param: null, type: 'NotFoundError' });
}

/** The model has no chat template at all (docs/contract.md §8.2). */
export const NO_CHAT_TEMPLATE_MESSAGE =
  'As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.';

/** A template that raised while rendering (`NO_CHAT_TEMPLATE_MESSAGE`, or the template's own text, docs/contract.md §8.2). */
export function chatTemplateError(message: string): ApiError {
  return engineError(message, null);
}

/** Structured-output compile failures found by the engine before generation (docs/contract.md §8.2 item 6, §8.15). */
export function structuredOutputError(message: string): ApiError {
  return engineError(message, 'structured_outputs');
}

/** The only body a failure after the first SSE byte may carry (docs/contract.md §8.15); the HTTP status stays 200. */
export const STREAM_ERROR_BODY = {
  error: { message: 'Internal server error', type: 'InternalServerError', param: null, code: 500 },
} as const;
