import type { GgufMatrixType } from '@/lib/engine/hf/gguf-export';

/** Messages between the request thread (lib/services/checkpoint-gguf.ts) and the GGUF export thread (thread.ts). */
export type ToGgufThread =
  | {
      type: 'begin';
      id: number;
      /** The base model's directory (config.json, tokenizer files, *.safetensors). */
      dir: string;
      /** The checkpoint's PEFT adapter, or null for the base alone. */
      adapter: { config: unknown; weights: Uint8Array } | null;
      matrixType: GgufMatrixType;
      name: string;
    }
  /** The next part of the file (the thread answers with one `chunk` or `end`). */
  | { type: 'pull'; id: number }
  | { type: 'abort'; id: number };

export type FromGgufThread =
  | { type: 'planned'; id: number; size: number }
  /** The checkpoint cannot be exported (GgufExportRefused: unsupported architecture, rope scaling, adapter). */
  | { type: 'refused'; id: number; message: string }
  | { type: 'chunk'; id: number; bytes: Uint8Array }
  | { type: 'end'; id: number }
  | { type: 'failed'; id: number; message: string };
