import crypto from 'node:crypto';
import { config } from '@/lib/config';
import { LocalArtifactStore } from './local';
import { S3ArtifactStore, s3OptionsFromEnv } from './s3';
import type { ArtifactStore } from './types';

/**
 * The artifact store in use: S3-compatible storage when TUNEBOARD_S3_ENDPOINT and TUNEBOARD_S3_BUCKET are set,
 * otherwise the local directory TUNEBOARD_ARTIFACT_DIR. Chosen per call from the environment (cheap), so
 * tests can switch backends.
 */
function store(): ArtifactStore {
  const s3 = s3OptionsFromEnv();
  return s3 ? new S3ArtifactStore(s3) : new LocalArtifactStore(config.artifactDir);
}

export const putArtifact = (key: string, data: Uint8Array | string) => store().put(key, data);
export const putArtifactStream = (
  key: string,
  source: NodeJS.ReadableStream,
  opts: { limit: number; onLimit: () => Error },
) => store().putStream(key, source, opts);
export const readArtifactBytes = (key: string) => store().readBytes(key);
export async function readArtifactText(key: string): Promise<string | undefined> {
  const bytes = await store().readBytes(key);
  return bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8');
}
export const artifactWebStream = (key: string) => store().webStream(key);
export const artifactExists = (key: string) => store().exists(key);
export const listArtifacts = (prefix: string) => store().list(prefix);
export const deleteArtifacts = (prefix: string) => store().deletePrefix(prefix);
export type { ArtifactStore } from './types';
export { storageFaultMessage } from './faults';

/** Writes and removes a small probe, so that a job learns before training that its checkpoint could not be saved. */
export async function probeArtifactStore(): Promise<void> {
  const key = `.probe/${crypto.randomUUID()}`;
  await putArtifact(key, 'probe');
  await deleteArtifacts(key);
}

/**
 * Local store only (S3 writes are atomic and buckets have lifecycle rules): removes `.tmp-` files older than
 * `minAgeMs`, which a crash during a write leaves behind, and reports how many it removed.
 */
export async function sweepTempFiles(minAgeMs: number): Promise<number> {
  if (s3OptionsFromEnv()) return 0;
  return new LocalArtifactStore(config.artifactDir).sweepTemp(minAgeMs);
}

/** Milliseconds since a local artifact or folder last changed; null on S3 or when missing. */
export async function artifactAgeMs(key: string): Promise<number | null> {
  if (s3OptionsFromEnv()) return null;
  return new LocalArtifactStore(config.artifactDir).ageMs(key);
}

export const isLocalArtifactStore = () => !s3OptionsFromEnv();
