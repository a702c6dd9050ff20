/**
 * The worker thread that parses large request bodies (bundled to .tuneboard/body-worker.mjs by
 * scripts/build-worker.mjs; driven by lib/api/body-offload.ts). JSON.parse, validation and JSON.stringify of a
 * 200 MiB trajectory log take seconds of CPU; on the request thread that stalls every other request, health
 * checks and chat streams included. Here the bytes arrive chunk by chunk as the client sends them, and only the
 * prepared result (strings and small objects) goes back.
 */
import { parentPort } from 'node:worker_threads';
import { ApiError } from '@/lib/errors';
import type { BodyFlavor } from './parse';
import { BODY_KINDS, prepareBody, transferables, type BodyKind } from './prepared';
import type { FromBodyThread, ToBodyThread } from './protocol';
import { lowerThisThreadPriority } from '@/lib/config/thread-priority';

interface Session {
  kind: BodyKind;
  flavor: BodyFlavor;
  decoder: TextDecoder;
  parts: string[];
}

const sessions = new Map<number, Session>();
const port = parentPort!;
lowerThisThreadPriority();

function reply(message: FromBodyThread) {
  port.postMessage(message, message.type === 'prepared' ? transferables(message.value) : undefined);
}

port.on('message', (message: ToBodyThread) => {
  switch (message.type) {
    case 'begin':
      if (!Object.hasOwn(BODY_KINDS, message.kind)) {
        reply({
          type: 'failed',
          id: message.id,
          error: { code: 'internal', message: `unknown body kind ${message.kind}` },
        });
        return;
      }
      sessions.set(message.id, { kind: message.kind, flavor: message.flavor, decoder: new TextDecoder(), parts: [] });
      return;
    case 'chunk': {
      const s = sessions.get(message.id);
      // Decoded as they come, so the raw bytes are released before the whole body is here.
      if (s) s.parts.push(s.decoder.decode(message.bytes, { stream: true }));
      return;
    }
    case 'abort':
      sessions.delete(message.id);
      return;
    case 'end': {
      const s = sessions.get(message.id);
      if (!s) return;
      sessions.delete(message.id);
      s.parts.push(s.decoder.decode());
      const text = s.parts.join('');
      s.parts.length = 0;
      try {
        reply({ type: 'prepared', id: message.id, value: prepareBody(s.kind, text, s.flavor) });
      } catch (err) {
        if (err instanceof ApiError) {
          reply({
            type: 'failed',
            id: message.id,
            error: {
              code: err.code,
              message: err.message,
              issues: err.issues,
              status: err.status,
              type: err.type,
              param: err.param,
            },
          });
        } else {
          reply({
            type: 'failed',
            id: message.id,
            error: { code: 'internal', message: String((err as Error)?.stack ?? err) },
          });
        }
      }
      return;
    }
  }
});
