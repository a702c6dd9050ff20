import fs from 'node:fs';
import path from 'node:path';
import type { HfTensorSource } from '@/lib/engine/hf/gguf-export';
import {
  parseSafetensorsHeader,
  safetensorsHeaderLength,
  type RawTensor,
  type SafetensorsEntry,
} from '@/lib/engine/safetensors';

/**
 * A model directory's safetensors files (every `*.safetensors`, sharded or not: a tensor is looked up by name in
 * whichever shard has it, as the engine's loader does) read a block of rows at a time with positioned reads, so the
 * export never holds a shard, let alone the model. Close it when done.
 */
export class FsTensorSource implements HfTensorSource {
  private readonly tensors = new Map<string, SafetensorsEntry & { fd: number; dataStart: number }>();
  private readonly fds: number[] = [];

  constructor(dir: string) {
    const shards = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.safetensors'))
      .sort();
    if (shards.length === 0) throw new Error('the model directory has no .safetensors weights');
    try {
      for (const shard of shards) {
        const fd = fs.openSync(path.join(dir, shard), 'r');
        this.fds.push(fd);
        const size = fs.fstatSync(fd).size;
        const first = Buffer.alloc(8);
        fs.readSync(fd, first, 0, 8, 0);
        const n = safetensorsHeaderLength(first, size);
        const header = Buffer.alloc(n);
        if (fs.readSync(fd, header, 0, n, 8) !== n) throw new Error(`${shard}: truncated header`);
        const { entries } = parseSafetensorsHeader(header, size - 8 - n);
        for (const [name, e] of entries) this.tensors.set(name, { ...e, fd, dataStart: 8 + n });
      }
    } catch (err) {
      this.close();
      throw err;
    }
  }

  info(name: string) {
    const t = this.tensors.get(name);
    return t && { dtype: t.dtype, shape: t.shape };
  }

  read(name: string, row0: number, rows: number): RawTensor {
    const t = this.tensors.get(name);
    if (!t) throw new Error(`missing tensor ${name}`);
    const total = t.shape.length === 1 ? 1 : t.shape[0];
    if (row0 < 0 || rows < 1 || row0 + rows > total) throw new Error(`rows ${row0}+${rows} outside ${name}`);
    const rowBytes = (t.end - t.begin) / total;
    const bytes = new Uint8Array(rows * rowBytes);
    let done = 0;
    while (done < bytes.length) {
      const n = fs.readSync(t.fd, bytes, done, bytes.length - done, t.dataStart + t.begin + row0 * rowBytes + done);
      if (n === 0) throw new Error(`unexpected end of file reading ${name}`);
      done += n;
    }
    const shape = t.shape.length === 1 ? [...t.shape] : [rows, ...t.shape.slice(1)];
    return { dtype: t.dtype, shape, bytes };
  }

  close(): void {
    for (const fd of this.fds.splice(0)) fs.closeSync(fd);
  }
}
