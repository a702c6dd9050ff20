import 'server-only';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { config } from '@/lib/config';
import { downloadProgressText } from '@/lib/schemas/base-models';
import { componentLogger } from '@/lib/logger';

const log = componentLogger('hub');

/**
 * Base models named by their Hugging Face Hub id (an `hf` entry of the base-models file without `path`), fetched
 * for serving the way `huggingface_hub` fetches them for the Python worker (issue 43: the worker trained such a
 * model and chat answered 503, because the server only read local folders). Same environment (HF_ENDPOINT for a
 * mirror, HF_TOKEN or the token file, HF_HUB_OFFLINE, HF_HOME / HF_HUB_CACHE, read through lib/config) and the same cache layout
 * (`models--org--name/{blobs,snapshots/<commit>,refs/<revision>}`, files linked into the snapshot), so a server
 * and a worker on one machine share one copy: whichever downloads first, the other finds it.
 *
 * Only what the built-in engine reads is fetched: config and tokenizer files, the chat template and the
 * safetensors weights (never .bin, .gguf or ONNX copies). Each LFS file is checked against the Hub's sha256. A
 * complete snapshot of `main` in the cache is used as it is, without asking the Hub again, as the worker loads it
 * (remove the model's cache folder to take a newer one).
 */

/** What the server can say about a Hub model right now. */
export type HubSnapshot =
  | { state: 'ready'; dir: string }
  | { state: 'downloading'; doneBytes: number; totalBytes: number | null; file: string | null }
  | { state: 'failed'; error: string };

const WANTED = new Set([
  'config.json',
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'chat_template.jinja',
  'model.safetensors.index.json',
]);
/** A failed fetch is tried again when the model is next asked about, this long after the failure. */
const RETRY_AFTER_MS = 30_000;

/** huggingface_hub's settings (lib/config), with the token file read when HF_TOKEN is unset, as it does. */
export function hubEnvironment() {
  const { home, cache, endpoint, token, offline } = config.hub;
  let fileToken: string | undefined;
  if (!token) {
    try {
      fileToken = fs.readFileSync(path.join(home, 'token'), 'utf8').trim() || undefined;
    } catch {
      fileToken = undefined;
    }
  }
  return { endpoint, cache, token: token ?? fileToken, offline };
}

function wanted(file: string): boolean {
  return !file.includes('/') && (WANTED.has(file) || file.endsWith('.safetensors'));
}

function repoFolder(cache: string, id: string): string {
  return path.join(cache, `models--${id.replace(/\//g, '--')}`);
}

/** The files a snapshot folder needs before the engine can load it (the index names every shard). */
function missingFiles(dir: string): string[] {
  const missing = ['config.json', 'tokenizer.json'].filter((f) => !fs.existsSync(path.join(dir, f)));
  const index = path.join(dir, 'model.safetensors.index.json');
  if (fs.existsSync(index)) {
    try {
      const map = (JSON.parse(fs.readFileSync(index, 'utf8')) as { weight_map?: Record<string, string> }).weight_map;
      for (const shard of new Set(Object.values(map ?? {}))) {
        if (!fs.existsSync(path.join(dir, shard))) missing.push(shard);
      }
    } catch {
      missing.push('model.safetensors.index.json');
    }
  } else if (!fs.existsSync(dir) || !fs.readdirSync(dir).some((f) => f.endsWith('.safetensors'))) {
    missing.push('*.safetensors');
  }
  return missing;
}

/** The cached snapshot of `revision`, when it is complete (what `HF_HUB_OFFLINE=1` loads). */
function cachedSnapshot(cache: string, id: string, revision: string): string | undefined {
  const repo = repoFolder(cache, id);
  let commit = revision;
  if (!/^[0-9a-f]{40}$/.test(revision)) {
    try {
      commit = fs.readFileSync(path.join(repo, 'refs', revision), 'utf8').trim();
    } catch {
      return undefined;
    }
  }
  const dir = path.join(repo, 'snapshots', commit);
  return missingFiles(dir).length === 0 ? dir : undefined;
}

interface Sibling {
  rfilename: string;
  size?: number;
  blobId?: string;
  lfs?: { sha256?: string; size?: number };
}

class HubError extends Error {}

interface Entry {
  key: string;
  snapshot: HubSnapshot;
  failedAt?: number;
}

/**
 * One table per process, on globalThis: Next's production server loads this module once per bundle (the routes, the
 * fast path, the start-up hook), and two copies of the table downloaded the same model at once (issue 43's e2e run:
 * the second rename found its file gone).
 */
const entries: Map<string, Entry> = ((globalThis as Record<symbol, unknown>)[Symbol.for('tuneboard.hubDownloads')] ??=
  new Map<string, Entry>()) as Map<string, Entry>;

/**
 * The model's folder when it is in the cache; otherwise starts fetching it (once) and says how far it got, or why
 * it failed (a failure is tried again after RETRY_AFTER_MS). Cheap enough to call on every request.
 */
export function hubSnapshot(id: string, revision = 'main'): HubSnapshot {
  const env = hubEnvironment();
  // Any change of setting is a fresh attempt (a token set after a 401 is tried at once); the token only as a hash.
  const tokenTag = env.token ? createHash('sha256').update(env.token).digest('hex').slice(0, 12) : '';
  const key = `${id}@${revision}|${env.cache}|${env.endpoint}|${env.offline}|${tokenTag}`;
  const entry = entries.get(key);
  if (entry?.snapshot.state === 'ready' && fs.existsSync(path.join(entry.snapshot.dir, 'config.json'))) {
    return entry.snapshot;
  }
  if (entry?.snapshot.state === 'downloading') return entry.snapshot;
  if (entry?.snapshot.state === 'failed' && Date.now() - (entry.failedAt ?? 0) < RETRY_AFTER_MS) return entry.snapshot;
  const cached = cachedSnapshot(env.cache, id, revision);
  if (cached) {
    const ready: Entry = { key, snapshot: { state: 'ready', dir: cached } };
    entries.set(key, ready);
    return ready.snapshot;
  }
  if (env.offline) {
    const failed: Entry = {
      key,
      failedAt: Date.now(),
      snapshot: {
        state: 'failed',
        error: `${id} is not in this server's Hugging Face cache (${env.cache}) and HF_HUB_OFFLINE is set: download it there first (hf download ${id})`,
      },
    };
    entries.set(key, failed);
    return failed.snapshot;
  }
  const started: Entry = { key, snapshot: { state: 'downloading', doneBytes: 0, totalBytes: null, file: null } };
  entries.set(key, started);
  void download(started, id, revision, env).then(
    (dir) => {
      if (entries.get(key) === started) entries.set(key, { key, snapshot: { state: 'ready', dir } });
      log.info({ model: id, dir }, 'Hugging Face model downloaded');
    },
    (err: unknown) => {
      const reason = err instanceof HubError ? err.message : `${(err as Error)?.message ?? String(err)}`;
      const error = `could not download ${id} from ${env.endpoint}: ${reason}`;
      if (entries.get(key) === started) {
        entries.set(key, { key, failedAt: Date.now(), snapshot: { state: 'failed', error } });
      }
      // An expected failure (the Hub's answer, the network) is one line; anything else keeps its stack.
      log.warn(
        err instanceof HubError ? { model: id, reason } : { model: id, err },
        'Hugging Face model download failed',
      );
    },
  );
  return started.snapshot;
}

/** A download in progress as one line: "412 MB of 1.2 GB (34%)". */
export function describeProgress(s: Extract<HubSnapshot, { state: 'downloading' }>): string {
  return downloadProgressText(s.doneBytes, s.totalBytes);
}

async function hubFetch(url: string, env: ReturnType<typeof hubEnvironment>, id: string): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { ...(env.token ? { authorization: `Bearer ${env.token}` } : {}), 'user-agent': 'tuneboard' },
      redirect: 'follow',
      signal: AbortSignal.timeout(60_000),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new HubError(`the Hub is not reachable (${cause?.code ?? cause?.message ?? (err as Error).message})`);
  }
  if (res.ok) return res;
  await res.body?.cancel();
  if (res.status === 401 || res.status === 403) {
    throw new HubError(
      env.token
        ? `the Hub refused the token (${res.status}): check that HF_TOKEN may read ${id} (gated models need their terms accepted)`
        : `${id} is gated or private (${res.status}): set HF_TOKEN where the server runs`,
    );
  }
  if (res.status === 404) throw new HubError(`${id} was not found (404): check the id and the revision`);
  throw new HubError(`the Hub answered ${res.status} for ${new URL(url).pathname}`);
}

async function download(entry: Entry, id: string, revision: string, env: ReturnType<typeof hubEnvironment>) {
  const progress = entry.snapshot as Extract<HubSnapshot, { state: 'downloading' }>;
  const info = (await (
    await hubFetch(`${env.endpoint}/api/models/${id}/revision/${encodeURIComponent(revision)}?blobs=true`, env, id)
  ).json()) as { sha?: string; siblings?: Sibling[] };
  const commit = info.sha;
  if (!commit || !/^[0-9a-f]{40}$/.test(commit) || !Array.isArray(info.siblings))
    throw new HubError('the Hub sent a revision without a commit or a file list');
  const files = info.siblings.filter((s) => typeof s.rfilename === 'string' && wanted(s.rfilename));
  if (!files.some((f) => f.rfilename.endsWith('.safetensors'))) {
    throw new HubError(
      'it has no .safetensors weights (the built-in engine reads safetensors; serve it with vLLM instead: "serve": "vllm")',
    );
  }
  for (const f of ['config.json', 'tokenizer.json']) {
    if (!files.some((s) => s.rfilename === f)) throw new HubError(`it has no ${f}`);
  }
  const sizes = files.map((f) => f.lfs?.size ?? f.size);
  progress.totalBytes = sizes.every((s) => typeof s === 'number') ? sizes.reduce((a, b) => a! + b!, 0)! : null;
  const repo = repoFolder(env.cache, id);
  const snapshotDir = path.join(repo, 'snapshots', commit);
  await fsp.mkdir(path.join(repo, 'blobs'), { recursive: true });
  await fsp.mkdir(snapshotDir, { recursive: true });
  for (const file of files) {
    const target = path.join(snapshotDir, file.rfilename);
    const size = file.lfs?.size ?? file.size ?? 0;
    if (fs.existsSync(target)) {
      progress.doneBytes += size;
      continue;
    }
    progress.file = file.rfilename;
    // The blob's name is what huggingface_hub names it: the LFS sha256, else the git blob id (the file's ETag).
    const etag = file.lfs?.sha256 ?? file.blobId;
    const blob = etag ? path.join(repo, 'blobs', etag) : undefined;
    if (!blob || !fs.existsSync(blob)) {
      const res = await hubFetch(
        `${env.endpoint}/${id}/resolve/${commit}/${encodeURIComponent(file.rfilename)}`,
        env,
        id,
      );
      const dest = blob ?? target;
      // A name of this download's own: another server process sharing the cache may fetch the same file at once.
      const partial = `${dest}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.incomplete`;
      const out = fs.createWriteStream(partial);
      const hash = createHash('sha256');
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          hash.update(chunk);
          progress.doneBytes += chunk.byteLength;
          if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
        }
        await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
      } catch (err) {
        out.destroy();
        await fsp.rm(partial, { force: true });
        throw new HubError(`the download of ${file.rfilename} broke off (${(err as Error).message})`);
      }
      const digest = hash.digest('hex');
      if (file.lfs?.sha256 && digest !== file.lfs.sha256) {
        await fsp.rm(partial, { force: true });
        throw new HubError(`${file.rfilename} arrived damaged (sha256 ${digest}, the Hub says ${file.lfs.sha256})`);
      }
      await fsp.rename(partial, dest);
    } else {
      progress.doneBytes += size;
    }
    if (blob) {
      // Relative, as huggingface_hub links them, so the cache can be moved or mounted elsewhere.
      await fsp.symlink(path.relative(path.dirname(target), blob), target).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
    }
  }
  if (revision !== commit) {
    await fsp.mkdir(path.join(repo, 'refs'), { recursive: true });
    await fsp.writeFile(path.join(repo, 'refs', revision), commit);
  }
  const missing = missingFiles(snapshotDir);
  if (missing.length > 0) throw new HubError(`the snapshot lacks ${missing.join(', ')}`);
  return snapshotDir;
}
