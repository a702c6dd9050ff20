import type http from 'node:http';

/**
 * A streamed answer that can also write itself straight to Node's response, for the API fast path
 * (lib/api/fast-path.ts) to use instead of reading the answer's web stream.
 *
 * A relayed completion arrives as Node's stream (the upstream's answer through Node's HTTP client) and leaves
 * as Node's stream (the client's response). Bridging it through a web ReadableStream in between (a pull and a
 * read per chunk, each a few promise hops) cost the request thread more than the upstream request itself did
 * (bench:gateway). The web stream is still what a handler returns, so that Next and tests can read the answer
 * the ordinary way; whichever of the two reads the answer first takes it, and the other must not be used.
 */
export type NodeWriter = (res: http.ServerResponse) => void;

// A global symbol: the fast path and the route handlers are bundled apart.
const WRITER = Symbol.for('tuneboard.nodeWriter');

/** Marks `stream` as writable to Node's response by `write` (see the module comment). */
export function attachNodeWriter(stream: ReadableStream<Uint8Array>, write: NodeWriter): void {
  (stream as unknown as Record<symbol, NodeWriter>)[WRITER] = write;
}

/**
 * The writer of a response's body, when it has one and nothing has read the web stream yet. The writer writes
 * the whole body and ends (or destroys) `res`; headers are the caller's, sent before.
 */
export function nodeWriterOf(body: ReadableStream<Uint8Array> | null): NodeWriter | undefined {
  if (!body || body.locked) return undefined;
  return (body as unknown as Record<symbol, NodeWriter | undefined>)[WRITER];
}
