import 'server-only';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { LlamaCppDtype } from '@/lib/catalog/base-models';
import { config } from '@/lib/config';
import { ApiError } from '@/lib/errors';
import { componentLogger } from '@/lib/logger';
import { GgufExportRefused } from '@/lib/engine/hf/gguf-export';
import { exportHfGgufLora } from '@/lib/engine/hf/gguf-lora';
import { hfCheckpointGguf } from './checkpoint-gguf';

const log = componentLogger('llama-cpp');

/**
 * The GGUF file a base model on llama.cpp is served from (the base-models file's `"engine": "llama.cpp"`), written
 * once per model directory and dtype into `<TUNEBOARD_ARTIFACT_DIR>/cache/llama-cpp/`, never per request.
 *
 * - The name is a fingerprint of the directory (its path, and each file's name, size and modification time) and
 *   the dtype, so an edited model gets a new file and two base ids on one directory share one.
 * - It is converted on the GGUF export thread (lib/export/thread.ts, as checkpoint downloads are), written under a
 *   `.tmp-` name (swept like the artifact store's own temporary files) and renamed into place, then its SHA-256
 *   and size go beside it (`<file>.sha256`, also renamed into place). A file without that record, or whose bytes
 *   do not match it (a crash, a disk error, an edit), is never handed to llama.cpp: it is rebuilt.
 * - The check hashes the file once per process and file version (size and modification time), then trusts a stat.
 */

/** Bumped when the export writes different bytes for the same input, so old cache files are not reused. */
const FORMAT = 1;

const building = new Map<string, Promise<string>>();
const verified = new Map<string, string>();

function stamp(st: fs.Stats): string {
  return `${st.size}:${st.mtimeMs}`;
}

/** The cache file for a model directory and dtype (the name changes whenever the directory's files do). */
export function llamaCppGgufPath(dir: string, dtype: LlamaCppDtype): string {
  const real = fs.realpathSync(dir);
  const files = fs
    .readdirSync(real)
    .filter((f) => f.endsWith('.json') || f.endsWith('.safetensors') || f.endsWith('.jinja'))
    .sort()
    .map((f) => {
      const st = fs.statSync(path.join(/*turbopackIgnore: true*/ real, f));
      return [f, st.size, st.mtimeMs];
    });
  const fingerprint = crypto
    .createHash('sha256')
    .update(JSON.stringify([FORMAT, dtype, real, files]))
    .digest('hex')
    .slice(0, 32);
  return path.join(config.artifactDir, 'cache', 'llama-cpp', `${fingerprint}.${dtype}.gguf`);
}

async function sha256(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 22 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Why the cache file cannot be used as it is, or null when it matches its record. */
async function problem(file: string): Promise<string | null> {
  let st: fs.Stats;
  try {
    st = await fsp.stat(file);
  } catch {
    return 'missing';
  }
  if (verified.get(file) === stamp(st)) return null;
  let record: { sha256: string; size: number };
  try {
    record = JSON.parse(await fsp.readFile(`${file}.sha256`, 'utf8')) as typeof record;
  } catch {
    return 'it has no checksum record (its writing did not finish)';
  }
  if (record.size !== st.size) return `it is ${st.size} bytes, its record says ${record.size}`;
  if ((await sha256(file)) !== record.sha256) return 'its SHA-256 does not match its record';
  verified.set(file, stamp(st));
  return null;
}

async function writeAtomically(target: string, write: (tmp: string) => Promise<void>): Promise<void> {
  const tmp = `${target}.tmp-${crypto.randomBytes(6).toString('hex')}`;
  try {
    await write(tmp);
    await fsp.rename(tmp, target);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
}

/** Writes `chunks` to `file` (temp name, rename), then its SHA-256 record beside it (also renamed into place). */
async function writeRecorded(file: string, chunks: Readable, expectedSize: number): Promise<number> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const hash = crypto.createHash('sha256');
  let size = 0;
  await writeAtomically(file, async (tmp) => {
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        size += chunk.byteLength;
        done(null, chunk);
      },
    });
    await pipeline(chunks, count, fs.createWriteStream(tmp));
    if (size !== expectedSize) throw new Error(`GGUF export wrote ${size} bytes, planned ${expectedSize}`);
  });
  // The record goes last: a file without one is unfinished and rebuilt.
  await writeAtomically(`${file}.sha256`, (tmp) =>
    fsp.writeFile(tmp, JSON.stringify({ sha256: hash.digest('hex'), size })),
  );
  verified.set(file, stamp(await fsp.stat(file)));
  return size;
}

async function build(file: string, dir: string, dtype: LlamaCppDtype, name: string): Promise<void> {
  let exported;
  try {
    exported = await hfCheckpointGguf({
      dir,
      adapter: null,
      matrixType: dtype === 'q8_0' ? 'Q8_0' : 'F16',
      // general.name: the directory's, not the base id's, since every id on the directory shares the file.
      name: path.basename(dir),
    });
  } catch (err) {
    // The export refuses what llama.cpp would run differently (architecture, rope scaling, tokenizer).
    const reason = err instanceof ApiError ? err.message.replace(/^.*?GGUF: /, '') : String(err);
    throw new ApiError('unavailable', `The model \`${name}\` cannot be served on llama.cpp: ${reason}`);
  }
  const started = performance.now();
  const size = await writeRecorded(
    file,
    Readable.fromWeb(exported.stream as WebReadableStream<Uint8Array>),
    exported.size,
  );
  log.info({ file, size, ms: Math.round(performance.now() - started) }, 'GGUF written for llama.cpp');
}

/** Runs `build` unless `file` matches its record; concurrent callers for one file share one run. */
function cached(file: string, build: () => Promise<void>): Promise<string> {
  let pending = building.get(file);
  if (!pending) {
    pending = (async () => {
      const why = await problem(file);
      if (why === null) return file;
      if (why !== 'missing') log.warn({ file, why }, 'GGUF cache file unusable; rebuilding it');
      verified.delete(file);
      await fsp.rm(`${file}.sha256`, { force: true });
      await build();
      return file;
    })();
    building.set(file, pending);
    pending.finally(() => building.delete(file)).catch(() => undefined);
  }
  return pending;
}

/**
 * The checked GGUF file of the Hugging Face model in `dir` at `dtype`: the cached one when it matches its record,
 * else written now (concurrent callers wait for one conversion). A model the export refuses is a 503 naming why.
 */
export function llamaCppGguf(options: { id: string; dir: string; dtype: LlamaCppDtype }): Promise<string> {
  const file = llamaCppGgufPath(options.dir, options.dtype);
  return cached(file, () => build(file, options.dir, options.dtype, options.id));
}

const refusedAdapters = new Map<string, string>();

/**
 * A checkpoint's PEFT adapter as a llama.cpp LoRA file (lib/engine/hf/gguf-lora.ts) for the base file `baseGguf`,
 * cached and checked like the base's (`<base file>.lora-<digest of the artifact key>.gguf`, a checkpoint's files
 * never change; a few MB, converted on this thread, read from the store only when written). Null when llama.cpp
 * cannot apply the adapter as it is (GgufExportRefused, remembered): the caller serves it on the WebAssembly engine.
 */
export async function llamaCppLoraGguf(options: {
  baseGguf: string;
  baseConfig: unknown;
  artifactKey: string;
  read: () => Promise<{ config: Uint8Array; weights: Uint8Array }>;
}): Promise<string | null> {
  const digest = crypto.createHash('sha256').update(options.artifactKey).digest('hex').slice(0, 32);
  const file = options.baseGguf.replace(/\.gguf$/, `.lora-${digest}.gguf`);
  if (refusedAdapters.has(file)) return null;
  try {
    return await cached(file, async () => {
      const adapter = await options.read();
      const bytes = exportHfGgufLora(options.baseConfig, {
        config: JSON.parse(new TextDecoder().decode(adapter.config)) as unknown,
        weights: adapter.weights,
      });
      await writeRecorded(file, Readable.from([bytes]), bytes.byteLength);
    });
  } catch (err) {
    if (!(err instanceof GgufExportRefused)) throw err;
    log.info({ artifactKey: options.artifactKey, why: err.message }, 'adapter served by the WebAssembly engine');
    refusedAdapters.set(file, err.message);
    return null;
  }
}
