/**
 * The artifact store: checkpoints and datasets, addressed by `/`-separated keys. Two backends share this
 * interface: a local directory (default) and S3-compatible object storage. Both make a written artifact
 * visible only once it is complete (write-then-rename locally; S3 PUTs are atomic).
 */
export interface ArtifactStore {
  put(key: string, data: Uint8Array | string): Promise<number>;
  /** Streams into the store with a byte limit; past it nothing is kept and `onLimit()`'s error is thrown. */
  putStream(key: string, source: NodeJS.ReadableStream, opts: { limit: number; onLimit: () => Error }): Promise<number>;
  readBytes(key: string): Promise<Uint8Array | undefined>;
  webStream(key: string): Promise<{ stream: ReadableStream<Uint8Array>; size: number } | undefined>;
  exists(key: string): Promise<boolean>;
  /** Names directly below a key prefix (files and folders), sorted. */
  list(prefix: string): Promise<string[]>;
  /** Removes everything under the prefix (or the single artifact with that key). */
  deletePrefix(prefix: string): Promise<void>;
}
