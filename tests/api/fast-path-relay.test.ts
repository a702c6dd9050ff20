import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { clearFastRoutes, installFastPath, registerFastRoutes } from '@/lib/api/fast-path';
import { nodeWriterOf } from '@/lib/inference/node-writer';
import { forwardChatCompletion, relayPost, type UpstreamResult } from '@/lib/inference/upstream';

/**
 * A relayed completion through the fast path, written from the upstream's Node stream to the client's
 * (lib/inference/node-writer.ts) instead of through a web stream: the same bytes as the web stream gives,
 * streamed as they come, with the same endings (upstream cut midway, client gone, a client slower than the
 * upstream).
 */

const event = (i: number, model = 'base') =>
  `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"${model}","choices":[{"index":0,"delta":{"content":"w${i}"},"logprobs":{"content":[{"token":"token_id:${i}","logprob":-1e-05}]},"finish_reason":null}]}\n\n`;
const usage =
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"base","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\n';

/** `gate(i)`, when set, is awaited before the upstream writes piece i (from the second on). */
type Plan = { pieces: string[]; cut?: boolean; gapMs?: number; gate?: (i: number) => Promise<void> };

describe('a relayed answer through the fast path', () => {
  let upstream: http.Server;
  let upstreamUrl: string;
  let gateway: http.Server;
  let base: string;
  let uninstall: () => void;
  let plan: Plan = { pieces: [] };
  // Whether the upstream saw its answer's connection close before it had written all of it.
  const upstreamClosedEarly: boolean[] = [];
  const results: UpstreamResult[] = [];

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', async () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        let finished = false;
        res.once('close', () => upstreamClosedEarly.push(!finished));
        for (const [i, piece] of plan.pieces.entries()) {
          if (res.destroyed) return;
          if (i > 0 && plan.gate) await plan.gate(i);
          res.write(piece);
          if (plan.gapMs) await new Promise((r) => setTimeout(r, plan.gapMs));
        }
        finished = true;
        if (plan.cut) res.socket?.destroy();
        else res.end();
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
    uninstall = installFastPath();
    gateway = http.createServer((_req, res) => res.writeHead(418).end());
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    gateway.closeAllConnections();
    upstream.closeAllConnections();
    await new Promise<void>((r) => gateway.close(() => r()));
    await new Promise<void>((r) => upstream.close(() => r()));
    uninstall();
  });
  afterEach(() => {
    clearFastRoutes();
    vi.unstubAllEnvs();
    upstreamClosedEarly.length = 0;
    results.length = 0;
  });

  /** A route that relays to the upstream as the chat route does, renaming `base` to `me/p/m`. */
  const registerRelay = (clientWantsUsage: boolean) => {
    vi.stubEnv('NODE_ENV', 'production');
    registerFastRoutes('/v1/relay', {
      POST: async (req) => {
        const result = await forwardChatCompletion({
          server: { baseUrl: upstreamUrl, fetch, post: relayPost },
          body: {
            messages: [],
            stream: true,
            ...(clientWantsUsage ? { stream_options: { include_usage: true } } : {}),
          },
          upstreamModel: 'base',
          modelAsSent: 'me/p/m',
          signal: req.signal,
        });
        results.push(result);
        return new Response(result.body, { headers: { 'content-type': 'text/event-stream' } });
      },
    });
  };

  /** The same answer read through the web stream, as Next (or a test calling the handler) reads it. */
  const viaWebStream = async (clientWantsUsage: boolean) => {
    const result = await forwardChatCompletion({
      server: { baseUrl: upstreamUrl, fetch, post: relayPost },
      body: { messages: [], stream: true, ...(clientWantsUsage ? { stream_options: { include_usage: true } } : {}) },
      upstreamModel: 'base',
      modelAsSent: 'me/p/m',
      signal: new AbortController().signal,
    });
    return { text: await new Response(result.body as ReadableStream).text(), usage: await result.usage };
  };

  it('sends the bytes the web stream gives, each piece as it comes, and reads the usage', async () => {
    // Events split across writes, a usage chunk the client did not ask for, and one it did.
    const raw = event(0) + event(1) + usage + 'data: [DONE]\n\n';
    for (const wantsUsage of [false, true]) {
      plan = { pieces: [raw.slice(0, 40), raw.slice(40, 300), raw.slice(300)] };
      registerRelay(wantsUsage);
      const web = await viaWebStream(wantsUsage);
      // The upstream sends its last piece only once the client has read the first event (bytes 0–213, which the
      // relay forwards whole when the second piece completes it), or after 5 s: a fixed 15 ms gap between pieces
      // let a machine busy with other suites join them all into one read. A relay that held the answer back until
      // its end still fails (one piece, after the 5 s).
      const pieces: string[] = [];
      plan.gate = async (i) => {
        const until = Date.now() + 5000;
        while (i === 2 && pieces.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 1));
      };
      const res = await fetch(`${base}/v1/relay`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) pieces.push(r.value);
      expect(pieces.length).toBeGreaterThan(1);
      expect(pieces.join('')).toBe(web.text);
      expect(web.text).toBe(
        event(0, 'me/p/m') +
          event(1, 'me/p/m') +
          (wantsUsage ? usage.replace('"base"', '"me/p/m"') : '') +
          'data: [DONE]\n\n',
      );
      expect(await results[0].usage).toEqual({ prompt_tokens: 3, completion_tokens: 2 });
      expect(web.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2 });
      // The handler's web stream was never read: the Node writer took the answer.
      expect((results[0].body as ReadableStream).locked).toBe(false);
      results.length = 0;
    }
  });

  it('ends the answer where the upstream cut it, with what was held back', async () => {
    // The last event has no blank line after it: it goes out when the upstream hangs up.
    plan = { pieces: [event(0), event(1).trimEnd()], cut: true, gapMs: 10 };
    registerRelay(false);
    const res = await fetch(`${base}/v1/relay`, { method: 'POST', body: '{}' });
    expect(await res.text()).toBe(event(0, 'me/p/m') + event(1, 'me/p/m').trimEnd() + '\n\n');
    expect(await results[0].usage).toBeNull();
  });

  it('stops the upstream when the client goes away', async () => {
    plan = { pieces: Array.from({ length: 200 }, (_, i) => event(i)), gapMs: 10 };
    registerRelay(false);
    const client = new AbortController();
    const res = await fetch(`${base}/v1/relay`, { method: 'POST', body: '{}', signal: client.signal });
    await res.body!.getReader().read();
    client.abort();
    await vi.waitFor(() => expect(upstreamClosedEarly).toEqual([true]), { timeout: 2000 });
    expect(await results[0].usage).toBeNull();
  });

  it('holds the upstream back while the client reads slower, and loses nothing', async () => {
    // About 4 MiB, passed through unchanged (no rename), into a response that takes a chunk at a time.
    const piece = event(7).repeat(200);
    plan = { pieces: Array.from({ length: 100 }, () => piece) };
    const result = await forwardChatCompletion({
      server: { baseUrl: upstreamUrl, fetch, post: relayPost },
      body: { messages: [], stream: true },
      upstreamModel: 'base',
      modelAsSent: 'base',
      signal: new AbortController().signal,
    });
    const received: Buffer[] = [];
    let mostQueued = 0;
    const out = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _enc, done) {
        received.push(chunk);
        setTimeout(done, 1);
      },
    });
    const write = out.write.bind(out);
    out.write = ((chunk: Buffer) => {
      const more = write(chunk);
      mostQueued = Math.max(mostQueued, out.writableLength);
      return more;
    }) as typeof out.write;
    const ended = new Promise((r) => out.once('finish', r));
    nodeWriterOf(result.body as ReadableStream)!(out as unknown as http.ServerResponse);
    await ended;
    expect(Buffer.concat(received).toString()).toBe(piece.repeat(100));
    // Without pausing the upstream, the whole answer would wait in this process's memory.
    expect(mostQueued).toBeLessThan((piece.length * 100) / 8);
    expect(await result.usage).toBeNull();
  });
});
