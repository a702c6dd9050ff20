import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { config } from '@/lib/config';

/**
 * The artifact store: checkpoints and datasets, addressed by `/`-separated keys. This is the local-directory
 * backend; the key space is the same one an S3-compatible backend would use.
 */
function resolveKey(key: string): string {
  const root = config.artifactDir;
  const full = path.resolve(root, key);
  // Keys are built by our code, but a `..` must never escape the store whatever builds them.
  if (full !== root && !full.startsWith(root + path.sep)) throw new Error(`artifact key escapes the store: ${key}`);
  return full;
}

/** Writes to a temporary file and renames it into place, so a crash never leaves a half-written artifact. */
export async function putArtifact(
  key: string,
  data: Uint8Array | string | ReadableStream<Uint8Array>,
): Promise<number> {
  const target = resolveKey(key);
  await fsp.mkdir(path.dirname(target), { recursive: true });
  const tmp = `${target}.tmp-${crypto.randomBytes(6).toString('hex')}`;
  try {
    if (typeof data === 'string' || data instanceof Uint8Array) {
      await fsp.writeFile(tmp, data);
    } else {
      await pipeline(
        Readable.fromWeb(data as import('node:stream/web').ReadableStream<Uint8Array>),
        fs.createWriteStream(tmp),
      );
    }
    await fsp.rename(tmp, target);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  return (await fsp.stat(target)).size;
}

/**
 * Streams a Node readable into the store with a byte limit; past it the partial file is removed and
 * `onLimit()`'s error is thrown. Same write-then-rename rule as putArtifact.
 */
export async function putArtifactStream(
  key: string,
  source: NodeJS.ReadableStream,
  opts: { limit: number; onLimit: () => Error },
): Promise<number> {
  const target = resolveKey(key);
  await fsp.mkdir(path.dirname(target), { recursive: true });
  const tmp = `${target}.tmp-${crypto.randomBytes(6).toString('hex')}`;
  let size = 0;
  let overLimit = false;
  const { Transform } = await import('node:stream');
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > opts.limit) {
        overLimit = true;
        done(opts.onLimit());
      } else done(null, chunk);
    },
  });
  try {
    await pipeline(source, counter, fs.createWriteStream(tmp));
    await fsp.rename(tmp, target);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw overLimit ? opts.onLimit() : err;
  }
  return size;
}

/** Line-by-line reading without holding the whole artifact in memory. */
export async function* readArtifactLines(key: string): AsyncGenerator<string> {
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input: fs.createReadStream(resolveKey(key)), crlfDelay: Infinity });
  for await (const line of lines) yield line;
}

export async function artifactExists(key: string): Promise<boolean> {
  try {
    await fsp.access(resolveKey(key));
    return true;
  } catch {
    return false;
  }
}

export async function readArtifactBytes(key: string): Promise<Uint8Array | undefined> {
  try {
    return new Uint8Array(await fsp.readFile(resolveKey(key)));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** A web stream of the artifact, for HTTP responses. */
export async function artifactWebStream(key: string): Promise<{ stream: ReadableStream<Uint8Array>; size: number } | undefined> {
  const full = resolveKey(key);
  try {
    const { size } = await fsp.stat(full);
    const stream = Readable.toWeb(fs.createReadStream(full)) as unknown as ReadableStream<Uint8Array>;
    return { stream, size };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export async function readArtifactText(key: string): Promise<string | undefined> {
  try {
    return await fsp.readFile(resolveKey(key), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Names directly below a key prefix (files and folders), sorted. */
export async function listArtifacts(prefix: string): Promise<string[]> {
  try {
    return (await fsp.readdir(resolveKey(prefix))).filter((n) => !n.includes('.tmp-')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

export async function deleteArtifacts(prefix: string): Promise<void> {
  await fsp.rm(resolveKey(prefix), { recursive: true, force: true });
}
