import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { config } from '@/lib/config';

/**
 * Relaying chat completions to an OpenAI-compatible server (vLLM) after our own auth, request validation,
 * naming and usage tracking. `model` goes out as the upstream's name and comes back as the name the client
 * sent. The rest of every answer is relayed as the upstream wrote it: the `model` value is spliced in place
 * rather than the JSON being parsed and re-serialized, because vLLM's Python float formatting (`1e-05`,
 * `-0.0`) is part of what clients compare, and a round trip through JavaScript numbers changes it.
 */

export interface UpstreamServer {
  baseUrl: string;
  apiKey?: string;
  fetch: typeof fetch;
}

export interface TokenCounts {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface UpstreamResult {
  status: number;
  contentType: string;
  /** Text for JSON answers, a byte stream for SSE. */
  body: string | ReadableStream<Uint8Array>;
  /** Resolves with the token counts once the answer has been fully relayed (null when unknown). */
  usage: Promise<TokenCounts | null>;
}

type Json = Record<string, unknown>;

/**
 * Replaces the string value of a top-level key of a JSON object text, leaving every other byte as it was.
 * Returns the text unchanged when the key is absent at the top level or its value is not a string.
 */
export function replaceTopLevelString(json: string, key: string, value: string): string {
  let depth = 0;
  let i = 0;
  const n = json.length;
  const readString = (from: number): number => {
    // from points at the opening quote; returns the index just past the closing quote.
    let j = from + 1;
    while (j < n) {
      const c = json.charCodeAt(j);
      if (c === 0x5c) j += 2;
      else if (c === 0x22) return j + 1;
      else j++;
    }
    return n;
  };
  while (i < n) {
    const c = json[i];
    if (c === '"') {
      const end = readString(i);
      if (depth === 1) {
        let k = end;
        while (k < n && /\s/.test(json[k])) k++;
        if (json[k] === ':') {
          // A key at the top level: compare it, then look at its value.
          let v = k + 1;
          while (v < n && /\s/.test(json[v])) v++;
          if (JSON.parse(json.slice(i, end)) === key) {
            if (json[v] !== '"') return json;
            const valueEnd = readString(v);
            return json.slice(0, v) + JSON.stringify(value) + json.slice(valueEnd);
          }
          i = v;
          continue;
        }
      }
      i = end;
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    i++;
  }
  return json;
}

function usageOf(obj: Json): TokenCounts | null {
  const u = obj.usage as { prompt_tokens?: number; completion_tokens?: number } | null | undefined;
  return u ? { prompt_tokens: u.prompt_tokens ?? 0, completion_tokens: u.completion_tokens ?? 0 } : null;
}

export async function forwardChatCompletion(input: {
  server: UpstreamServer;
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

  const res = await input.server.fetch(`${input.server.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(input.server.apiKey ? { authorization: `Bearer ${input.server.apiKey}` } : {}),
    },
    body: JSON.stringify(outgoing),
    signal: input.signal,
  });
  const contentType = res.headers.get('content-type') ?? 'application/json';
  const renamed = input.modelAsSent !== input.upstreamModel;
  const rename = (json: string) => (renamed ? replaceTopLevelString(json, 'model', input.modelAsSent) : json);

  if (!streaming || !res.ok || !contentType.includes('text/event-stream') || !res.body) {
    const text = await res.text();
    if (!res.ok) return { status: res.status, contentType, body: text, usage: Promise.resolve(null) };
    let usage: TokenCounts | null = null;
    try {
      usage = usageOf(JSON.parse(text) as Json);
    } catch {
      // not JSON: relayed as is, usage unknown
    }
    return { status: res.status, contentType, body: rename(text), usage: Promise.resolve(usage) };
  }

  let resolveUsage!: (u: TokenCounts | null) => void;
  const usage = new Promise<TokenCounts | null>((r) => (resolveUsage = r));
  let seenUsage: TokenCounts | null = null;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const reader = res.body.getReader();
  // Events are re-framed (`data: …\n\n`, what vLLM writes) only when one has to change: a renamed model or
  // a usage chunk the client did not ask for. Otherwise the upstream's bytes go out as they came, and the
  // parser only watches them for the token counts.
  const passThrough = !renamed && clientWantsUsage;
  let out: string[] = [];

  const onEvent = (event: EventSourceMessage) => {
    const data = event.data;
    let drop = false;
    // Only chunks that mention usage are parsed, and only to read it.
    if (data.includes('"usage"')) {
      try {
        const chunk = JSON.parse(data) as Json;
        const u = usageOf(chunk);
        if (u) {
          seenUsage = u;
          drop = !clientWantsUsage && Array.isArray(chunk.choices) && chunk.choices.length === 0;
        }
      } catch {
        // not JSON (e.g. [DONE]): relayed as is
      }
    }
    if (passThrough || drop) return;
    const payload = data === '[DONE]' ? data : rename(data);
    out.push(
      `${event.event ? `event: ${event.event}\n` : ''}${payload.replace(/\n/g, '\ndata: ').replace(/^/, 'data: ')}\n\n`,
    );
  };
  const parser = createParser({ onEvent });

  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (done) {
          parser.feed(decoder.decode());
          // An unterminated last event still counts (the old relay sent it too).
          parser.reset({ consume: true });
          if (!passThrough && out.length) controller.enqueue(encoder.encode(out.join('')));
          resolveUsage(seenUsage);
          controller.close();
          return;
        }
        parser.feed(decoder.decode(value, { stream: true }));
        if (passThrough) {
          controller.enqueue(value);
          return;
        }
        if (out.length) {
          controller.enqueue(encoder.encode(out.join('')));
          out = [];
          return;
        }
      }
    },
    async cancel() {
      resolveUsage(seenUsage);
      await reader.cancel().catch(() => undefined);
    },
  });
  return { status: res.status, contentType, body: stream, usage };
}

let fetchOverride: typeof fetch | undefined;

/** Tests point the upstream at an in-process server. */
export function setUpstreamFetch(f: typeof fetch | undefined): void {
  fetchOverride = f;
}

/** The configured vLLM server, or undefined when this Tuneboard has none. */
export function upstreamServer(): UpstreamServer | undefined {
  const baseUrl = config.upstreamUrl;
  if (!baseUrl) return undefined;
  return { baseUrl, apiKey: config.upstreamApiKey, fetch: fetchOverride ?? fetch };
}
