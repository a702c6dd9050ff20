/** Loading llama.cpp (node-llama-cpp's prebuilt CPU binding) for the inference benchmarks. */
import type { Llama } from 'node-llama-cpp';

type NodeLlamaCpp = typeof import('node-llama-cpp');

/** Loads the prebuilt CPU binding with one thread, or returns why it cannot. Never builds or downloads. */
export async function loadLlamaCpp(): Promise<{ lib: NodeLlamaCpp; llama: Llama } | { error: string }> {
  try {
    // Dynamic import: node-llama-cpp is ESM with top-level await, which tsx's CommonJS mode cannot require.
    const lib = await import('node-llama-cpp');
    const llama = await lib.getLlama({
      gpu: false,
      build: 'never',
      skipDownload: true,
      // One thread: with two, ggml's worker spin-waits and competes with our own thread on 2 cores.
      maxThreads: 1,
      logLevel: lib.LlamaLogLevel.error,
    });
    return { lib, llama };
  } catch (err) {
    return { error: String(err) };
  }
}
