import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ArtifactStore } from './types';

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/** Artifacts as files under one directory. Temporary files carry `.tmp-` and are renamed into place. */
export class LocalArtifactStore implements ArtifactStore {
  constructor(private readonly root: string) {}

  private resolve(key: string): string {
    const full = path.resolve(this.root, key);
    // Keys are built by our code, but a `..` must never escape the store whatever builds them.
    if (full !== this.root && !full.startsWith(this.root + path.sep))
      throw new Error(`artifact key escapes the store: ${key}`);
    return full;
  }

  private async temp(key: string): Promise<{ target: string; tmp: string }> {
    const target = this.resolve(key);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    return { target, tmp: `${target}.tmp-${crypto.randomBytes(6).toString('hex')}` };
  }

  async put(key: string, data: Uint8Array | string): Promise<number> {
    const { target, tmp } = await this.temp(key);
    try {
      await fsp.writeFile(tmp, data);
      await fsp.rename(tmp, target);
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
    return typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
  }

  async putStream(
    key: string,
    source: NodeJS.ReadableStream,
    opts: { limit: number; onLimit: () => Error },
  ): Promise<number> {
    const { target, tmp } = await this.temp(key);
    let size = 0;
    let overLimit = false;
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

  async readBytes(key: string): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(await fsp.readFile(this.resolve(key)));
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async webStream(key: string) {
    const full = this.resolve(key);
    try {
      const { size } = await fsp.stat(full);
      return { stream: Readable.toWeb(fs.createReadStream(full)) as unknown as ReadableStream<Uint8Array>, size };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await fsp.access(this.resolve(key));
      return true;
    } catch {
      return false;
    }
  }

  async list(prefix: string): Promise<string[]> {
    try {
      return (await fsp.readdir(this.resolve(prefix))).filter((n) => !n.includes('.tmp-')).sort();
    } catch (err) {
      if (isMissing(err) || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
      throw err;
    }
  }

  async sweepTemp(minAgeMs: number): Promise<number> {
    let entries: string[];
    try {
      entries = await fsp.readdir(this.root, { recursive: true });
    } catch (err) {
      if (isMissing(err)) return 0;
      throw err;
    }
    let removed = 0;
    for (const entry of entries.filter((e) => path.basename(e).includes('.tmp-'))) {
      const file = path.join(this.root, entry);
      const age = await this.ageOf(file);
      if (age !== null && age >= minAgeMs) {
        await fsp.rm(file, { force: true, recursive: true });
        removed++;
      }
    }
    return removed;
  }

  async ageMs(key: string): Promise<number | null> {
    return this.ageOf(this.resolve(key));
  }

  private async ageOf(file: string): Promise<number | null> {
    try {
      return Date.now() - (await fsp.stat(file)).mtimeMs;
    } catch {
      return null;
    }
  }

  async deletePrefix(prefix: string): Promise<void> {
    await fsp.rm(this.resolve(prefix), { recursive: true, force: true });
  }
}
