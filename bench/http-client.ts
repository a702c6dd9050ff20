import http from 'node:http';

export interface HttpReply {
  status: number;
  /** The Content-Type header ('' when absent). */
  type: string;
  bytes: Buffer;
  /** The body as UTF-8. */
  readonly text: string;
}

/**
 * One request with Node's HTTP client on a kept-alive agent; resolves once the whole answer has arrived. The
 * benchmarks' load generators use it rather than fetch, whose own CPU (undici's) took 0.7 of this 2-core machine's
 * cores in bench:gateway's load and held bench:api's quick cases near 1,000 requests/s: a load generator shares the
 * machine with the server it measures.
 */
export function httpRequest(
  url: string,
  opts: { agent: http.Agent; method?: string; headers?: Record<string, string>; body?: string | Uint8Array },
): Promise<HttpReply> {
  const payload = opts.body === undefined ? undefined : Buffer.from(opts.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: opts.method ?? 'GET',
        agent: opts.agent,
        headers: { ...opts.headers, ...(payload ? { 'content-length': payload.length } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type'] ?? ''),
            bytes,
            // Decoded when read: a binary answer (bench:tinker's protobuf results) is never decoded as text.
            get text() {
              return bytes.toString();
            },
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
