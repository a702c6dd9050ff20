/*
 * Validation of POST /v1/chat/completions in vLLM's order (docs/contract.md §8.2), one module per phase, split where
 * the route has work to do:
 *
 *   parseChatRequest(body)            (1) request validators, then the schema          → 400 Bad Request
 *                                         (request-checks.ts; structured-output.ts: one kind at most)
 *   parseModelName(req.model) + DB    (2) model                                         → 400 / 404
 *   checkTemplateRequest(req)             chat_template refusal, chat_template_kwargs    → 400 BadRequestError
 *                                         (template-inputs.ts)
 *   render the template, count tokens (3) template errors: chatTemplateError(text)      → 400 BadRequestError
 *   resolveSamplingRequest(req, ctx)  (3) context, (4) sampling, (5) greedy, (6) engine  → 400 BadRequestError
 *                                         (sampling.ts; structured-output.ts maps response_format)
 *
 * Every message is vLLM's bare validator text with Python number formatting; the first failure wins.
 */

export { parseChatRequest, type ChatRequest } from './request-checks';
export {
  checkTemplateRequest,
  UNTRUSTED_TEMPLATE_MESSAGE,
  type TemplateInputs,
  type TemplateTool,
} from './template-inputs';
export {
  generationDefaults,
  resolveSamplingRequest,
  truncatePrompt,
  type GenerationDefaults,
  type SamplingContext,
  type SamplingRequest,
} from './sampling';
export type { StructuredOutputConstraint, StructuredOutputSpec } from './structured-output';
