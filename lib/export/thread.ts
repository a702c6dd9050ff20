/**
 * The thread that writes GGUF downloads of Hugging Face checkpoints (bundled to .tuneboard/gguf-worker.mjs by
 * scripts/build-worker.mjs; driven by lib/services/checkpoint-gguf.ts). Merging a LoRA adapter into the base
 * weights and converting them to F16 or Q8_0 is seconds of CPU for a 0.6B model; on the request thread that would
 * stall every other request. Here the base model's files are read a block of rows at a time and the file goes
 * back one part per `pull`, so the request thread sends it at the client's pace and neither side holds it whole.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { GgufExportRefused, hfGgufExport } from '@/lib/engine/hf/gguf-export';
import { lowerThisThreadPriority } from '@/lib/config/thread-priority';
import { FsTensorSource } from './fs-tensor-source';
import type { FromGgufThread, ToGgufThread } from './protocol';

const port = parentPort!;
lowerThisThreadPriority();

/** Parts smaller than this (norm vectors, padding) are sent together, to keep the message count down. */
const MIN_PART = 1 << 20;

const sessions = new Map<number, { chunks: Generator<Uint8Array>; source: FsTensorSource }>();

function send(message: FromGgufThread) {
  port.postMessage(message, message.type === 'chunk' ? [message.bytes.buffer as ArrayBuffer] : undefined);
}

function readJson(dir: string, name: string, required: boolean): unknown {
  const file = path.join(dir, name);
  if (!fs.existsSync(file)) {
    if (required) throw new GgufExportRefused(`its model directory lacks ${name}`);
    return undefined;
  }
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    throw new GgufExportRefused(`its ${name} is not valid JSON`);
  }
}

function end(id: number) {
  const s = sessions.get(id);
  sessions.delete(id);
  if (!s) return;
  s.chunks.return(undefined);
  s.source.close();
}

function begin(message: Extract<ToGgufThread, { type: 'begin' }>) {
  const { id, dir } = message;
  let source: FsTensorSource | undefined;
  try {
    const config = readJson(dir, 'config.json', true);
    const tokenizerJson = readJson(dir, 'tokenizer.json', true);
    const tokenizerConfig = (readJson(dir, 'tokenizer_config.json', false) ?? {}) as Record<string, unknown>;
    // transformers ≥ 4.43 may store the template beside tokenizer_config.json (as the serving path reads it).
    const jinja = path.join(dir, 'chat_template.jinja');
    if (typeof tokenizerConfig.chat_template !== 'string' && fs.existsSync(jinja)) {
      tokenizerConfig.chat_template = fs.readFileSync(jinja, 'utf8');
    }
    source = new FsTensorSource(dir);
    const exported = hfGgufExport(
      {
        config,
        tokenizer: { json: tokenizerJson, config: tokenizerConfig },
        adapter: message.adapter ?? undefined,
        matrixType: message.matrixType,
        name: message.name,
      },
      source,
    );
    sessions.set(id, { chunks: exported.chunks(), source });
    send({ type: 'planned', id, size: exported.size });
  } catch (err) {
    source?.close();
    if (err instanceof GgufExportRefused) send({ type: 'refused', id, message: err.message });
    else send({ type: 'failed', id, message: String((err as Error)?.stack ?? err) });
  }
}

function pull(id: number) {
  const s = sessions.get(id);
  if (!s) return;
  try {
    const parts: Uint8Array[] = [];
    let size = 0;
    while (size < MIN_PART) {
      const next = s.chunks.next();
      if (next.done) break;
      parts.push(next.value);
      size += next.value.length;
    }
    if (size === 0) {
      end(id);
      send({ type: 'end', id });
      return;
    }
    let bytes: Uint8Array;
    if (parts.length === 1 && parts[0].byteOffset === 0 && parts[0].byteLength === parts[0].buffer.byteLength) {
      bytes = parts[0];
    } else {
      bytes = new Uint8Array(size);
      let at = 0;
      for (const p of parts) {
        bytes.set(p, at);
        at += p.length;
      }
    }
    send({ type: 'chunk', id, bytes });
  } catch (err) {
    end(id);
    send({ type: 'failed', id, message: String((err as Error)?.stack ?? err) });
  }
}

port.on('message', (message: ToGgufThread) => {
  switch (message.type) {
    case 'begin':
      begin(message);
      return;
    case 'pull':
      pull(message.id);
      return;
    case 'abort':
      end(message.id);
      return;
  }
});
