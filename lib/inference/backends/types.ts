import type { ChatRequest } from '../chat-request';

/**
 * One interface for everything that can answer a chat completion. The service (lib/services/chat.ts) parses
 * the request, resolves the model to a backend and records usage; the backend owns the rest — chat template,
 * tokenization, context checks, generation and the bytes of the answer — because each engine has its own
 * (the built-in engine renders and tokenizes here; vLLM does it itself and its answer is relayed).
 */
export interface ChatBackend {
  /** Which engine serves it, as shown in model listings. */
  readonly kind: ChatBackendKind;
  chat(call: ChatCall): Promise<ChatResult>;
}

export type ChatBackendKind = 'builtin' | 'vllm';

export interface ChatCall {
  /** The JSON body exactly as the client sent it (a relaying backend forwards it). */
  body: unknown;
  /** The same body after the request validators (`parseChatRequest`). */
  request: ChatRequest;
  /** The `model` string as the client sent it: responses carry it back unchanged. */
  modelAsSent: string;
  headers: Headers;
  signal: AbortSignal;
  /** Called once per request, when the token counts are known (after the last byte for streams). */
  onUsage(usage: ChatUsage): void;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
}

export type ChatResult =
  { kind: 'json'; body: string; status?: number } | { kind: 'stream'; body: ReadableStream<Uint8Array> };
