/**
 * The upstream backend: chat requests for models served by an OpenAI-compatible server (vLLM, with one LoRA
 * adapter per checkpoint) are forwarded there after our own auth, request validation, naming and usage
 * tracking. `model` is rewritten on the way out and back, so the client only ever sees the name it sent
 * (docs/contract.md §7). Streams pass through chunk by chunk.
 */

export interface UpstreamConfig {
  baseUrl: string;
  apiKey?: string;
  fetch: typeof fetch;
}

let fetchOverride: typeof fetch | undefined;

/** Tests point the upstream at an in-process server. */
export function setUpstreamFetch(f: typeof fetch | undefined): void {
  fetchOverride = f;
}

export function upstreamConfig(): UpstreamConfig | undefined {
  const baseUrl = process.env.TUNEBOARD_UPSTREAM_URL;
  if (!baseUrl) return undefined;
  return { baseUrl: baseUrl.replace(/\/+$/, ''), apiKey: process.env.TUNEBOARD_UPSTREAM_API_KEY, fetch: fetchOverride ?? fetch };
}

export interface UpstreamResult {
  status: number;
  contentType: string;
  /** Text for JSON answers, a byte stream for SSE. */
  body: string | ReadableStream<Uint8Array>;
  /** Resolves with the token counts once the answer has been fully relayed (null when unknown). */
  usage: Promise<{ prompt_tokens: number; completion_tokens: number } | null>;
}

type Json = Record<string, unknown>;

export async function forwardChatCompletion(input: {
  config: UpstreamConfig;
  body: Json;
  upstreamModel: string;
  modelAsSent: string;
  signal: AbortSignal;
}): Promise<UpstreamResult> {
  const streaming = input.body.stream === true;
  const clientWantsUsage =
    streaming && Boolean(input.body.stream_options) && (input.body.stream_options as Json).include_usage !== false;
  const outgoing: Json = { ...input.body, model: input.upstreamModel };
  // Usage is always requested upstream so it can be recorded; the extra chunk is dropped if the client did not ask.
  if (streaming) outgoing.stream_options = { ...((input.body.stream_options as Json) ?? {}), include_usage: true };

  const res = await input.config.fetch(`${input.config.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(input.config.apiKey ? { authorization: `Bearer ${input.config.apiKey}` } : {}),
    },
    body: JSON.stringify(outgoing),
    signal: input.signal,
  });
  const contentType = res.headers.get('content-type') ?? 'application/json';

  const rewrite = (obj: Json): Json => ('model' in obj ? { ...obj, model: input.modelAsSent } : obj);
  if (!streaming || !res.ok || !contentType.includes('text/event-stream') || !res.body) {
    const text = await res.text();
    let usage: { prompt_tokens: number; completion_tokens: number } | null = null;
    let body = text;
    try {
      const parsed = JSON.parse(text) as Json;
      if (res.ok) {
        body = JSON.stringify(rewrite(parsed));
        const u = parsed.usage as { prompt_tokens?: number; completion_tokens?: number } | undefined;
        if (u) usage = { prompt_tokens: u.prompt_tokens ?? 0, completion_tokens: u.completion_tokens ?? 0 };
      }
    } catch {
      // not JSON: relayed as is
    }
    return { status: res.status, contentType, body, usage: Promise.resolve(usage) };
  }

  let resolveUsage!: (u: { prompt_tokens: number; completion_tokens: number } | null) => void;
  const usage = new Promise<{ prompt_tokens: number; completion_tokens: number } | null>((r) => (resolveUsage = r));
  let seenUsage: { prompt_tokens: number; completion_tokens: number } | null = null;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = '';
  const reader = res.body.getReader();

  const relayEvent = (event: string): string | null => {
    if (!event.startsWith('data: ')) return `${event}\n\n`;
    const data = event.slice(6);
    if (data === '[DONE]') return `${event}\n\n`;
    try {
      const chunk = JSON.parse(data) as Json;
      const u = chunk.usage as { prompt_tokens?: number; completion_tokens?: number } | undefined;
      if (u) seenUsage = { prompt_tokens: u.prompt_tokens ?? 0, completion_tokens: u.completion_tokens ?? 0 };
      const usageOnly = Array.isArray(chunk.choices) && chunk.choices.length === 0 && u;
      if (usageOnly && !clientWantsUsage) return null;
      return `data: ${JSON.stringify(rewrite(chunk))}\n\n`;
    } catch {
      return `${event}\n\n`;
    }
  };

  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done) {
          if (buffer.trim()) {
            const out = relayEvent(buffer.trim());
            if (out) controller.enqueue(encoder.encode(out));
          }
          resolveUsage(seenUsage);
          controller.close();
          return;
        }
        buffer += decoder.decode(value, { stream: true });
        let sent = false;
        for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
          const event = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const out = relayEvent(event);
          if (out) {
            controller.enqueue(encoder.encode(out));
            sent = true;
          }
        }
        if (sent) return;
      }
    },
    async cancel() {
      resolveUsage(seenUsage);
      await reader.cancel().catch(() => undefined);
    },
  });
  return { status: res.status, contentType, body: stream, usage };
}
