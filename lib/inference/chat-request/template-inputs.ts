import type { ChatMessage } from '@/lib/schemas/chat';
import { engineError } from '../chat-errors';
import { PySet, pyRepr } from '../python-repr';
import type { ChatRequest } from './request-checks';

export const UNTRUSTED_TEMPLATE_MESSAGE =
  'Chat template is passed with request, but --trust-request-chat-template is not set. Refused request with untrusted chat template.';

/** A tool as the template sees it: vLLM's `model_dump()`, unset keys as null (docs/contract.md §8.12). */
export interface TemplateTool {
  type: 'function';
  function: { name: string; description: string | null; parameters: Record<string, unknown> | null };
}

/** What the chat template renders with (docs/contract.md §8.12). */
export interface TemplateInputs {
  messages: ChatMessage[];
  tools: TemplateTool[] | null;
  documents: Record<string, string>[] | null;
  add_generation_prompt: boolean;
  continue_final_message: boolean;
  add_special_tokens: boolean;
  reasoning_effort: 'low' | 'medium' | 'high' | null;
  /**
   * Extra template variables from `chat_template_kwargs`, minus the names the request fields supply (they
   * win, v0.12+ precedence). The renderer still keeps only keys its template references (docs/contract.md §8.12).
   */
  chat_template_kwargs: Record<string, unknown>;
}

const TEMPLATE_CALL_NAMES = new Set([
  'messages',
  'conversation',
  'tools',
  'documents',
  'add_generation_prompt',
  'continue_final_message',
  'reasoning_effort',
]);

/**
 * After model resolution, before rendering: vLLM refuses request templates (no
 * --trust-request-chat-template) and the kwargs `chat_template` / `tokenize`. Throws 400 BadRequestError.
 */
export function checkTemplateRequest(req: ChatRequest): TemplateInputs {
  const kwargs = req.chat_template_kwargs ?? {};
  if (req.chat_template != null) throw engineError(UNTRUSTED_TEMPLATE_MESSAGE, 'chat_template');
  if (kwargs.chat_template != null) throw engineError(UNTRUSTED_TEMPLATE_MESSAGE, 'chat_template_kwargs');
  const unexpected = ['chat_template', 'tokenize'].filter((k) => k in kwargs);
  if (unexpected.length) {
    throw engineError(
      `Found unexpected chat template kwargs from request: ${pyRepr(new PySet(unexpected))}`,
      'chat_template_kwargs',
    );
  }
  return {
    messages: req.messages,
    tools:
      req.tools?.map((t) => ({
        type: 'function' as const,
        function: {
          name: t.function.name,
          description: t.function.description ?? null,
          parameters: t.function.parameters ?? null,
        },
      })) ?? null,
    documents: req.documents ?? null,
    add_generation_prompt: req.add_generation_prompt,
    continue_final_message: req.continue_final_message,
    add_special_tokens: req.add_special_tokens,
    reasoning_effort: req.reasoning_effort ?? null,
    chat_template_kwargs: Object.fromEntries(Object.entries(kwargs).filter(([k]) => !TEMPLATE_CALL_NAMES.has(k))),
  };
}

// ---- phase 2 -----------------------------------------------------------------------------------------
