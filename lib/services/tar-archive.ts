import 'server-only';
/**
 * A POSIX ustar archive written as a stream, for downloads made of several stored files (a LoRA adapter's
 * config and weights). Plain tar, not zip: no compression to spend CPU on (safetensors barely compress), the
 * exact size is known up front for Content-Length, and every platform's `tar -xf` opens it.
 */

export interface TarEntry {
  name: string;
  size: number;
  /** Called when the entry's turn comes, so only one file is open at a time. */
  open: () => Promise<ReadableStream<Uint8Array>>;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

export function tarHeader(name: string, size: number, mtime: number): Uint8Array {
  const enc = new TextEncoder();
  const nameBytes = enc.encode(name);
  if (nameBytes.length > 100) throw new Error(`tar entry name longer than 100 bytes: ${name}`);
  const h = new Uint8Array(BLOCK);
  const put = (text: string, offset: number) => h.set(enc.encode(text), offset);
  h.set(nameBytes, 0);
  put(octal(0o644, 8), 100); // mode
  put(octal(0, 8), 108); // uid
  put(octal(0, 8), 116); // gid
  put(octal(size, 12), 124);
  put(octal(Math.floor(mtime / 1000), 12), 136);
  put('        ', 148); // checksum field counts as spaces while summing
  put('0', 156); // regular file
  put('ustar\0', 257);
  put('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  put(sum.toString(8).padStart(6, '0') + '\0 ', 148);
  return h;
}

export function tarSize(entries: readonly { size: number }[]): number {
  return entries.reduce((n, e) => n + BLOCK + Math.ceil(e.size / BLOCK) * BLOCK, 0) + 2 * BLOCK;
}

/** The archive as a stream; a file that yields more or fewer bytes than its declared size is an error. */
export function tarStream(entries: readonly TarEntry[], mtime = Date.now()): ReadableStream<Uint8Array> {
  const queue = [...entries];
  let current: { entry: TarEntry; reader: ReadableStreamDefaultReader<Uint8Array>; written: number } | null = null;
  let ended = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!current) {
        const entry = queue.shift();
        if (!entry) {
          if (!ended) controller.enqueue(new Uint8Array(2 * BLOCK));
          ended = true;
          controller.close();
          return;
        }
        controller.enqueue(tarHeader(entry.name, entry.size, mtime));
        current = { entry, reader: (await entry.open()).getReader(), written: 0 };
        return;
      }
      const { value, done } = await current.reader.read();
      if (!done) {
        current.written += value.byteLength;
        if (current.written > current.entry.size)
          throw new Error(`${current.entry.name} is larger than its listed size`);
        controller.enqueue(value);
        return;
      }
      if (current.written !== current.entry.size)
        throw new Error(`${current.entry.name} is shorter than its listed size`);
      const pad = (BLOCK - (current.written % BLOCK)) % BLOCK;
      if (pad) controller.enqueue(new Uint8Array(pad));
      current = null;
    },
    async cancel(reason) {
      await current?.reader.cancel(reason);
    },
  });
}
