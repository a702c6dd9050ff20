import 'server-only';

/**
 * The fast path's stand-in for a web Request whose body is small (read whole when the handler first asks for it,
 * lib/api/fast-path.ts) or absent: the same members a handler can use, made in about 2 µs where undici's Request took 50 µs of the
 * request thread with a body and 15 µs without. Undici's constructor wraps the body in a web stream, makes an
 * AbortController for its signal (each a transferable object, costly to create in Node 20) and validates every
 * option; on a relayed chat completion that was 6 % of the gateway's CPU time (bench:gateway's profile). Here
 * the stream, the signal and the body's copies are made only if a handler asks for them, and most never do: the
 * routes read the bytes through lib/api/body.ts.
 *
 * Streamed bodies (large, or chunked) still get undici's Request (lib/api/fast-path.ts).
 */

/** The signal a handler sees: aborted when the client goes away before its answer is written. */
export class ClientSignal {
  private aborter: AbortController | undefined;
  private gone = false;

  /** Made on first use: most handlers never look at it. */
  get signal(): AbortSignal {
    if (!this.aborter) {
      this.aborter = new AbortController();
      if (this.gone) this.aborter.abort();
    }
    return this.aborter.signal;
  }

  clientGone(): void {
    this.gone = true;
    this.aborter?.abort();
  }
}

// As a Request decodes its body: UTF-8 with a leading byte order mark dropped (which Buffer's toString keeps).
const utf8 = new TextDecoder();

export class PrereadRequest {
  readonly cache: RequestCache = 'default';
  readonly credentials: RequestCredentials = 'same-origin';
  readonly destination: RequestDestination = '';
  readonly integrity = '';
  readonly keepalive = false;
  readonly mode: RequestMode = 'cors';
  readonly redirect: RequestRedirect = 'follow';
  readonly referrer = 'about:client';
  readonly referrerPolicy: ReferrerPolicy = '';
  readonly duplex = 'half';
  private stream: ReadableStream<Uint8Array> | undefined;
  private consumed = false;

  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: Headers,
    /**
     * Null for a request without a body, as a Request's `body` is; else the bytes, or the fast path's reader of them
     * (called at most once per read: it keeps its own result).
     */
    private readonly content: Buffer | (() => Promise<Buffer>) | null,
    private readonly client: ClientSignal,
  ) {}

  get [Symbol.toStringTag]() {
    return 'Request';
  }

  get signal(): AbortSignal {
    return this.client.signal;
  }

  get body(): ReadableStream<Uint8Array> | null {
    const content = this.content;
    if (!content) return null;
    this.stream ??= new ReadableStream<Uint8Array>({
      async pull(controller) {
        controller.enqueue(new Uint8Array(typeof content === 'function' ? await content() : content));
        controller.close();
      },
    });
    return this.stream;
  }

  get bodyUsed(): boolean {
    return this.consumed || Boolean(this.stream?.locked);
  }

  /** The whole body, once, as a Request gives it: a second read, or one after the stream was taken, fails. */
  private async take(): Promise<Buffer> {
    if (this.bodyUsed) throw new TypeError('Body is unusable: Body has already been read');
    this.consumed = true;
    const content = this.content;
    if (typeof content === 'function') return content();
    return content ?? Buffer.alloc(0);
  }

  async text(): Promise<string> {
    if (this.stream) return new Response(this.stream).text();
    return utf8.decode(await this.take());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.bytes()).buffer;
  }

  /** A copy: the bytes read may share their memory with other buffers (Node's pool). */
  async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return new Uint8Array(await this.bytesRead());
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.bytes()], { type: this.headers.get('content-type') ?? '' });
  }

  async formData(): Promise<FormData> {
    return this.real(await this.bytes()).formData();
  }

  clone(): PrereadRequest {
    if (this.bodyUsed) throw new TypeError('Request.clone: Body has already been consumed.');
    return new PrereadRequest(this.method, this.url, new Headers(this.headers), this.content, this.client);
  }

  private async bytesRead(): Promise<Uint8Array> {
    if (this.stream) return new Uint8Array(await new Response(this.stream).arrayBuffer());
    return this.take();
  }

  /** Undici's Request for what only it implements (multipart parsing). */
  private real(body: Uint8Array<ArrayBuffer>): Request {
    return new Request(this.url, { method: this.method, headers: this.headers, body, duplex: 'half' } as RequestInit);
  }
}
