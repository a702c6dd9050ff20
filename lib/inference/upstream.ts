import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { config } from '@/lib/config';
import { componentLogger } from '@/lib/logger';
import { attachNodeWriter } from './node-writer';

const log = componentLogger('vllm');

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
  /** For the upstream's small JSON calls (models, adapters); and for the relay when `post` is not given. */
  fetch: typeof fetch;
  /** The relay's request: Node's HTTP client on kept-alive sockets (see relayPost). */
  post?: typeof relayPost;
}

/** An upstream answer as the relay reads it, whichever client fetched it. */
export interface UpstreamReply {
  status: number;
  contentType: string;
  body: AsyncIterable<Uint8Array>;
  /** The same body as Node's stream, when Node's HTTP client fetched it (relayPost): see node-writer.ts. */
  node?: Readable;
  /** Stops reading (the client went away). */
  cancel(): void;
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
          if (isKey(json, i, end, key)) {
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

/**
 * Whether the JSON string text json[from, end) (quotes included) spells `key`. Compared as raw text unless it has an
 * escape: the relay checks every top-level key of every chunk, and an upstream's malformed escape must leave its
 * answer as it was, not throw (a 500 for the client).
 */
function isKey(json: string, from: number, end: number, key: string): boolean {
  const raw = json.slice(from + 1, end - 1);
  if (!raw.includes('\\')) return raw === key;
  try {
    return JSON.parse(json.slice(from, end)) === key;
  } catch {
    return false;
  }
}

function usageOf(obj: Json): TokenCounts | null {
  const u = obj.usage as { prompt_tokens?: number; completion_tokens?: number } | null | undefined;
  return u ? { prompt_tokens: u.prompt_tokens ?? 0, completion_tokens: u.completion_tokens ?? 0 } : null;
}

async function readText(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  return Buffer.concat(chunks).toString('utf8');
}

function fetchPost(server: UpstreamServer) {
  return async (
    url: string,
    body: string,
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<UpstreamReply> => {
    const res = await server.fetch(url, { method: 'POST', headers, body, signal });
    const stream = res.body;
    return {
      status: res.status,
      contentType: res.headers.get('content-type') ?? 'application/json',
      // Node's web streams are async iterables; the DOM typings do not say so.
      body: (stream as unknown as AsyncIterable<Uint8Array> | null) ?? (async function* () {})(),
      cancel: () => void stream?.cancel().catch(() => undefined),
    };
  };
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

  const post = input.server.post ?? fetchPost(input.server);
  const res = await post(
    `${input.server.baseUrl}/chat/completions`,
    JSON.stringify(outgoing),
    {
      'content-type': 'application/json',
      ...(input.server.apiKey ? { authorization: `Bearer ${input.server.apiKey}` } : {}),
    },
    input.signal,
  );
  const ok = res.status >= 200 && res.status < 300;
  const contentType = res.contentType;
  const renamed = input.modelAsSent !== input.upstreamModel;
  const rename = renamed ? { from: input.upstreamModel, to: input.modelAsSent } : undefined;

  if (!streaming || !ok || !contentType.includes('text/event-stream')) {
    const text = await readText(res.body);
    if (!ok) return { status: res.status, contentType, body: text, usage: Promise.resolve(null) };
    let usage: TokenCounts | null = null;
    try {
      usage = usageOf(JSON.parse(text) as Json);
    } catch {
      // not JSON: relayed as is, usage unknown
    }
    const body = rename ? replaceTopLevelString(text, 'model', rename.to) : text;
    return { status: res.status, contentType, body, usage: Promise.resolve(usage) };
  }

  let resolveUsage!: (u: TokenCounts | null) => void;
  const usage = new Promise<TokenCounts | null>((r) => (resolveUsage = r));
  const relay = new SseRelay({ rename, dropUsage: !clientWantsUsage });
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    resolveUsage(relay.usage);
  };
  let chunks: AsyncIterator<Uint8Array> | undefined;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        chunks ??= res.body[Symbol.asyncIterator]();
        for (;;) {
          // A failed read (the upstream hung up midway) ends the answer where it was cut.
          const next = await chunks.next().catch(() => ({ done: true as const, value: undefined }));
          if (next.done) {
            const rest = relay.end();
            if (rest) controller.enqueue(rest);
            finish();
            controller.close();
            return;
          }
          const out = relay.push(next.value);
          if (out) {
            controller.enqueue(out);
            return;
          }
        }
      },
      cancel() {
        finish();
        res.cancel();
      },
    },
    // Nothing is read from the upstream until someone reads this stream: the fast path may write the answer
    // through its Node writer instead, and the two must not both consume it.
    { highWaterMark: 0 },
  );
  const node = res.node;
  if (node) attachNodeWriter(stream, (out) => relayToNode(node, relay, out, finish));
  return { status: res.status, contentType, body: stream, usage };
}

/**
 * The relay from Node's stream to Node's response: what a bare Node proxy does (data events, pause on a full
 * socket, resume on drain), with the SSE relay in between. Ends like the web stream does: an upstream that
 * hangs up midway ends the answer where it was cut; a client that goes away stops the upstream's answer.
 */
function relayToNode(src: Readable, relay: SseRelay, out: http.ServerResponse, finish: () => void): void {
  let done = false;
  const onDrain = () => src.resume();
  // The listeners on src stay (guarded by done): an 'error' without a listener would be thrown.
  const stop = () => {
    done = true;
    out.off('drain', onDrain);
    finish();
  };
  const onEnd = () => {
    if (done) return;
    const rest = relay.end(); // may hold the usage: read before finish()
    stop();
    if (!out.destroyed) out.end(rest ?? undefined);
  };
  const onGone = () => {
    if (done) return;
    stop();
    src.destroy();
  };
  if (out.destroyed) return onGone();
  src.on('data', (chunk: Buffer) => {
    if (done) return;
    const bytes = relay.push(chunk);
    if (bytes && !out.write(bytes)) src.pause();
  });
  src.once('end', onEnd).on('error', onEnd).once('close', onEnd);
  out.on('drain', onDrain).once('close', onGone);
}

const LF2 = Buffer.from('\n\n');
const CR = 0x0d;
const USAGE = Buffer.from('"usage"');
const encoder = new TextEncoder();

function occurrences(text: string, part: string): number {
  let n = 0;
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length)) n++;
  return n;
}

/**
 * The relay's view of an SSE answer: bytes in, bytes out, the token counts read on the way.
 *
 * An answer is relayed as the upstream wrote it, except for the events that must change: `model` renamed (an
 * upstream base model under another name here) or the usage chunk dropped (requested for the bookkeeping, not
 * by the client). Events are cut at blank lines; a run of events in which none needs a change (no rename and
 * no `"usage"` in the bytes: every event of a typical answer but the last) goes out as the same bytes, without
 * being decoded or parsed. vLLM frames events with LF; an answer framed with CR or CRLF (which SSE also allows)
 * is handed to a full SSE parser from its first CR on, and re-framed with LF.
 */
export class SseRelay {
  /** The counts of the last usage chunk seen. */
  usage: TokenCounts | null = null;
  private pending: Buffer = Buffer.alloc(0);
  private parser: EventSourceParser | undefined;
  private parsed: string[] = [];
  private readonly decoder = new TextDecoder();

  /** `"model":"<from>"` as vLLM writes it (no space), and what it becomes. */
  private readonly compact: string = '';
  private readonly replacement: string = '';

  /** `rename`: the upstream's name for the model (`from`) and the one the client asked for (`to`). */
  constructor(private readonly options: { rename?: { from: string; to: string }; dropUsage: boolean }) {
    if (options.rename) {
      this.compact = `"model":${JSON.stringify(options.rename.from)}`;
      this.replacement = `"model":${JSON.stringify(options.rename.to)}`;
    }
  }

  /** The bytes to send for this chunk, or null when it completes no event. */
  push(chunk: Uint8Array): Uint8Array | null {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.parser || bytes.includes(CR)) return this.parse(bytes);
    const buf = this.pending.length > 0 ? Buffer.concat([this.pending, bytes]) : bytes;
    const cut = buf.lastIndexOf(LF2);
    if (cut < 0) {
      this.pending = buf;
      return null;
    }
    this.pending = buf.subarray(cut + 2);
    return this.events(buf.subarray(0, cut + 2));
  }

  /** What is left once the upstream has finished: an unterminated last event still counts. */
  end(): Uint8Array | null {
    if (this.parser) {
      this.parser.feed(this.decoder.decode());
      this.parser.reset({ consume: true });
      if (!this.options.rename && !this.options.dropUsage) this.parsed = [];
      return this.takeParsed();
    }
    const rest = this.pending;
    this.pending = Buffer.alloc(0);
    return rest.length > 0 ? this.events(rest) : null;
  }

  /** Complete events (or an unterminated last one): as they are when none needs a change. */
  private events(buf: Buffer): Uint8Array | null {
    // Only an event that mentions usage may need more than a rename: each goes through rewrite(), and the runs of
    // events around them through plain().
    let at = buf.indexOf(USAGE);
    if (at < 0) return this.plain(buf);
    const out: Uint8Array[] = [];
    let from = 0;
    while (at >= 0) {
      const before = buf.lastIndexOf(LF2, at);
      const start = Math.max(from, before < 0 ? 0 : before + 2);
      const after = buf.indexOf(LF2, at);
      const end = after < 0 ? buf.length : after + 2;
      out.push(this.plain(buf.subarray(from, start)));
      const event = this.rewrite(buf.toString('utf8', start, end));
      if (event) out.push(event);
      from = end;
      at = buf.indexOf(USAGE, from);
    }
    out.push(this.plain(buf.subarray(from)));
    return Buffer.concat(out);
  }

  /**
   * Events none of which mentions usage: the same bytes, or renamed. When every `"model"` in the run is
   * `"model":"<from>"` (vLLM's chunks), one native replace renames them all; rewriting event by event cost a
   * relayed 64-token answer about 0.3 ms of the request thread (bench:gateway, trained model). An unescaped
   * `"model":` can only be a key, and OpenAI's chunks have no `model` key but the top-level one.
   */
  private plain(bytes: Buffer): Uint8Array {
    if (!this.options.rename || bytes.length === 0) return bytes;
    const text = bytes.toString('utf8');
    // (An unterminated last event goes through rewrite(), which ends it with its blank line, as it always did.)
    if (text.endsWith('\n\n') && occurrences(text, this.compact) === occurrences(text, '"model"'))
      return Buffer.from(text.replaceAll(this.compact, this.replacement));
    return this.rewrite(text) ?? new Uint8Array(0);
  }

  /** Events re-written one by one: each goes as it was unless its data changed. */
  private rewrite(text: string): Uint8Array | null {
    const out: string[] = [];
    for (const raw of text.split('\n\n')) {
      if (raw === '') continue;
      const lines = raw.split('\n');
      const fields = lines.filter((l) => !l.startsWith('data:'));
      const data = lines
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
        .join('\n');
      const payload = this.change(data);
      if (payload === null) continue;
      out.push(
        payload === data
          ? `${raw}\n\n`
          : `${fields.map((l) => `${l}\n`).join('')}${payload.replace(/^/gm, 'data: ')}\n\n`,
      );
    }
    return out.length > 0 ? encoder.encode(out.join('')) : null;
  }

  /** An event's data as it goes out (renamed), or null to drop it; reads the usage on the way. */
  private change(data: string): string | null {
    if (data.includes('"usage"')) {
      try {
        const chunk = JSON.parse(data) as Json;
        const u = usageOf(chunk);
        if (u) {
          this.usage = u;
          if (this.options.dropUsage && Array.isArray(chunk.choices) && chunk.choices.length === 0) return null;
        }
      } catch {
        // not JSON: relayed as is
      }
    }
    return data === '[DONE]' || !this.options.rename
      ? data
      : replaceTopLevelString(data, 'model', this.options.rename.to);
  }

  private parse(bytes: Buffer): Uint8Array | null {
    let raw = bytes;
    if (!this.parser) {
      this.parser = createParser({
        onEvent: (event: EventSourceMessage) => {
          const payload = this.change(event.data);
          if (payload === null) return;
          this.parsed.push(`${event.event ? `event: ${event.event}\n` : ''}${payload.replace(/^/gm, 'data: ')}\n\n`);
        },
      });
      // The unfinished event held back so far: not sent yet, so the parser reads it first.
      if (this.pending.length > 0) raw = Buffer.concat([this.pending, bytes]);
      this.pending = Buffer.alloc(0);
    }
    this.parser.feed(this.decoder.decode(raw, { stream: true }));
    // Nothing to change in any event: the parser only reads the usage, and the bytes go out as they came.
    if (!this.options.rename && !this.options.dropUsage) {
      this.parsed = [];
      return raw;
    }
    return this.takeParsed();
  }

  private takeParsed(): Uint8Array | null {
    if (this.parsed.length === 0) return null;
    const out = encoder.encode(this.parsed.join(''));
    this.parsed = [];
    return out;
  }
}

/**
 * Idle sockets are dropped after 4 s. Node's agent otherwise keeps them for as long as the upstream does, and
 * reads the upstream's `Keep-Alive: timeout=` hint only when it has a timeout of its own to lower. Uvicorn (vLLM)
 * and Node both close idle connections after 5 s, uvicorn without the hint: a request sent on such a socket as it
 * closes is reset (see relayPost).
 */
const IDLE_SOCKET_MS = 4_000;
const agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  'https:': new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
};

/** How a kept-alive socket that the upstream closed as it was reused fails (before any byte of the answer). */
const STALE_SOCKET_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * POSTs a body with Node's HTTP client on kept-alive sockets, and hands back the answer's body as Node's stream.
 * The global fetch would do the same through two layers of web streams and, in a Next.js server, its request
 * tracing: on a relayed completion that was a fifth of the gateway's time on the request thread
 * (bench:gateway).
 *
 * A request that fails on a reused socket before any byte of the answer is sent once more, on a new connection:
 * the upstream closed that socket as the request went out (its idle timeout, a restart). Without this, a client
 * got 503 "not reachable" from a healthy upstream (bench:gateway in CI, one request of a run); a scratch test
 * that reused 832 sockets as a busy gateway would, at the moment the upstream closed them, lost 237 to resets.
 * Sending a chat completion twice is safe even where the upstream had read it: it changes nothing there. The new
 * connection is not taken from the pool, whose other idle sockets are no younger than the one that failed.
 */
export function relayPost(
  url: string,
  body: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<UpstreamReply> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  const send = (fresh: boolean) =>
    new Promise<UpstreamReply>((resolve, reject) => {
      const req = client.request(
        target,
        {
          method: 'POST',
          // agent false: a connection of its own, closed after this answer.
          agent: fresh ? false : agents[target.protocol as 'http:' | 'https:'],
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          signal,
        },
        (res) =>
          resolve({
            status: res.statusCode ?? 502,
            contentType: String(res.headers['content-type'] ?? 'application/json'),
            body: res,
            node: res,
            cancel: () => res.destroy(),
          }),
      );
      req.once('error', (err: NodeJS.ErrnoException) => {
        if (!fresh && req.reusedSocket && !signal.aborted && STALE_SOCKET_ERRORS.has(err.code ?? '')) {
          log.warn(
            { code: err.code, url: target.origin },
            'upstream closed a kept-alive socket as it was reused; retrying',
          );
          send(true).then(resolve, reject);
        } else reject(err);
      });
      req.end(body);
    });
  return send(false);
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
  return fetchOverride
    ? { baseUrl, apiKey: config.upstreamApiKey, fetch: fetchOverride }
    : { baseUrl, apiKey: config.upstreamApiKey, fetch, post: relayPost };
}
