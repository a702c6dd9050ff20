import { chatCompletionChunkSchema, chatErrorEnvelopeSchema, type ChatCompletionChunk } from '@/lib/schemas/chat';
import { ApiClientError } from '../api/api-fetch';
import { interpretChatEvent, readSseEvents } from '../api/sse';

/** The chat routes answer errors in the OpenAI/vLLM envelope, not the `{detail}` shape apiFetch reads. */
export function chatErrorMessage(status: number, body: unknown): string {
  const parsed = chatErrorEnvelopeSchema.safeParse(body);
  if (parsed.success && parsed.data.error.message) return parsed.data.error.message;
  if (status === 401) return 'Your session has expired. Sign in again.';
  if (status >= 500) return 'The server had a problem. Try again in a moment.';
  return `Request failed with status ${status}.`;
}

/**
 * POST /v1/chat/completions with `stream: true`, calling `onChunk` for every validated chunk as it
 * arrives. Resolves when the server sends [DONE] (or closes the stream); rejects with ApiClientError
 * for an HTTP error or an in-band error event, and with the AbortError when `signal` aborts — the caller
 * tells a stop apart from a failure by the error's name.
 */
export async function streamChatCompletion(
  body: object,
  { signal, onChunk }: { signal?: AbortSignal; onChunk: (chunk: ChatCompletionChunk) => void },
): Promise<void> {
  let response: Response;
  try {
    response = await fetch('/v1/chat/completions', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal,
    });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === 'AbortError') throw cause;
    throw new ApiClientError(0, 'Could not reach the server. Check your connection and try again.', {}, { cause });
  }
  if (!response.ok || !response.body) {
    const payload: unknown = await response.json().catch(() => undefined);
    throw new ApiClientError(response.status, chatErrorMessage(response.status, payload));
  }
  for await (const event of readSseEvents(response.body)) {
    const message = interpretChatEvent(event.data);
    if (message.kind === 'done') return;
    if (message.kind === 'error') throw new ApiClientError(message.code ?? 500, message.message);
    if (message.kind === 'invalid') continue; // a keep-alive or a proxy's note: not ours to fail on
    const chunk = chatCompletionChunkSchema.safeParse(message.value);
    if (chunk.success) onChunk(chunk.data);
  }
}
