import 'server-only';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ApiError } from '@/lib/errors';
import { config } from '@/lib/config';
import { upstreamServer } from '@/lib/inference/upstream';
import { VllmAdapterManager } from '@/lib/inference/vllm-lora';
import { artifactWebStream } from '@/lib/storage';

/**
 * A checkpoint of a vLLM-served model is a PEFT LoRA adapter in the artifact store, two sibling files:
 * `<prefix>/adapter_config.json` and `<prefix>/adapter_model.safetensors` (the checkpoint's artifact key
 * names the latter). vLLM reads adapters from its own file system, so before it is asked to load one, both
 * files are copied out of the artifact store (local or S3) into TUNEBOARD_VLLM_ADAPTER_DIR, a folder both
 * machines see, under one directory per checkpoint. A checkpoint never changes, so an existing directory is
 * reused as is.
 */
export const ADAPTER_FILES = ['adapter_config.json', 'adapter_model.safetensors'] as const;

const globalForAdapters = globalThis as unknown as { __tuneboardVllmAdapters?: VllmAdapterManager };

/** The process-wide adapter manager (one vLLM server, one LRU within its --max-loras). */
export function vllmAdapters(): VllmAdapterManager {
  return (globalForAdapters.__tuneboardVllmAdapters ??= new VllmAdapterManager(
    upstreamServer,
    () => config.vllmMaxLoras,
  ));
}

/** Whether this Tuneboard can hand adapters to vLLM at all (a shared adapter folder is configured). */
export function adapterLoadingConfigured(): boolean {
  return Boolean(config.vllmAdapterDir);
}

/** Copies a checkpoint's adapter into the shared folder; returns its directory as the vLLM server sees it. */
export async function materializeAdapter(checkpointId: string, artifactKey: string): Promise<string> {
  const root = config.vllmAdapterDir;
  const onServer = config.vllmAdapterDirOnServer;
  if (!root || !onServer)
    throw new ApiError(
      'unavailable',
      'This checkpoint cannot be served right now: no adapter folder shared with the vLLM server is configured (TUNEBOARD_VLLM_ADAPTER_DIR)',
    );
  const dirName = `ckpt-${checkpointId}`;
  const dir = path.join(root, dirName);
  const complete = ADAPTER_FILES.every((f) => fs.existsSync(path.join(dir, f)));
  if (!complete) {
    const prefix = artifactKey.slice(0, artifactKey.lastIndexOf('/') + 1);
    // Written beside the final directory and renamed into place, so vLLM never sees half an adapter.
    await fsp.mkdir(root, { recursive: true });
    const tmp = await fsp.mkdtemp(path.join(root, `.${dirName}-`));
    try {
      for (const file of ADAPTER_FILES) {
        const artifact = await artifactWebStream(`${prefix}${file}`);
        if (!artifact)
          throw new ApiError(
            'internal',
            `The checkpoint's adapter is incomplete in the artifact store: ${prefix}${file} is missing`,
          );
        await pipeline(
          Readable.fromWeb(artifact.stream as unknown as WebReadableStream<Uint8Array>),
          fs.createWriteStream(path.join(/*turbopackIgnore: true*/ tmp, file)),
        );
      }
      await fsp.rename(tmp, dir).catch(async (err: NodeJS.ErrnoException) => {
        // Another request materialized it first: theirs is the same bytes.
        if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      });
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  }
  return path.posix.join(onServer, dirName);
}
