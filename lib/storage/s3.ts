import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { AwsClient } from 'aws4fetch';
import { LocalArtifactStore } from './local';
import type { ArtifactStore } from './types';
import { config } from '@/lib/config';

export interface S3Options {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Optional key prefix inside the bucket, so several installations can share one. */
  prefix?: string;
}

function xmlValues(xml: string, tag: string): string[] {
  const out: string[] = [];
  const re = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g');
  for (let m = re.exec(xml); m; m = re.exec(xml)) out.push(decodeXml(m[1]));
  return out;
}

function decodeXml(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/**
 * S3-compatible object storage (AWS S3, MinIO, Ceph, R2…) with SigV4 signing and path-style addressing.
 * Uploads of unknown length are spooled to a temporary file first, so the PUT carries a length and the
 * object appears only when complete.
 */
export class S3ArtifactStore implements ArtifactStore {
  private readonly client: AwsClient;
  private readonly base: string;

  constructor(private readonly opts: S3Options) {
    this.client = new AwsClient({
      accessKeyId: opts.accessKeyId,
      secretAccessKey: opts.secretAccessKey,
      region: opts.region,
      service: 's3',
    });
    this.base = `${opts.endpoint.replace(/\/+$/, '')}/${opts.bucket}`;
  }

  private objectKey(key: string): string {
    if (key.split('/').includes('..')) throw new Error(`artifact key escapes the store: ${key}`);
    return [this.opts.prefix, key].filter(Boolean).join('/').replace(/\/+/g, '/').replace(/^\//, '');
  }

  private url(key: string): string {
    return `${this.base}/${this.objectKey(key).split('/').map(encodeURIComponent).join('/')}`;
  }

  private async send(url: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
    // The body is not hashed into the signature: large and streamed payloads stay unbuffered.
    const headers = { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', ...init.headers };
    return this.client.fetch(url, { ...init, headers, ...(init.body ? { duplex: 'half' } : {}) } as RequestInit);
  }

  private async check(res: Response, what: string): Promise<Response> {
    if (res.ok) return res;
    const text = await res.text().catch(() => '');
    throw new Error(`S3 ${what} failed: ${res.status} ${xmlValues(text, 'Code')[0] ?? text.slice(0, 200)}`);
  }

  async put(key: string, data: Uint8Array | string): Promise<number> {
    const body = typeof data === 'string' ? new TextEncoder().encode(data) : new Uint8Array(data);
    const res = await this.send(this.url(key), {
      method: 'PUT',
      body,
      headers: { 'content-length': String(body.byteLength) },
    });
    await this.check(res, `PUT ${key}`);
    return body.byteLength;
  }

  async putStream(
    key: string,
    source: NodeJS.ReadableStream,
    opts: { limit: number; onLimit: () => Error },
  ): Promise<number> {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'tb-s3-'));
    try {
      const spool = new LocalArtifactStore(dir);
      const size = await spool.putStream('body', source, opts);
      const file = path.join(dir, 'body');
      const res = await this.send(this.url(key), {
        method: 'PUT',
        body: Readable.toWeb(fs.createReadStream(file)) as unknown as BodyInit,
        headers: { 'content-length': String(size) },
      });
      await this.check(res, `PUT ${key}`);
      return size;
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  async readBytes(key: string): Promise<Uint8Array | undefined> {
    const res = await this.send(this.url(key));
    if (res.status === 404) return undefined;
    await this.check(res, `GET ${key}`);
    return new Uint8Array(await res.arrayBuffer());
  }

  async webStream(key: string) {
    const res = await this.send(this.url(key));
    if (res.status === 404) return undefined;
    await this.check(res, `GET ${key}`);
    return { stream: res.body as ReadableStream<Uint8Array>, size: Number(res.headers.get('content-length') ?? 0) };
  }

  async exists(key: string): Promise<boolean> {
    const res = await this.send(this.url(key), { method: 'HEAD' });
    return res.ok;
  }

  private async listRaw(prefix: string, delimiter: boolean): Promise<{ keys: string[]; prefixes: string[] }> {
    const keys: string[] = [];
    const prefixes: string[] = [];
    let token: string | undefined;
    do {
      const params = new URLSearchParams({ 'list-type': '2', prefix });
      if (delimiter) params.set('delimiter', '/');
      if (token) params.set('continuation-token', token);
      const res = await this.check(await this.send(`${this.base}?${params}`), `LIST ${prefix}`);
      const xml = await res.text();
      keys.push(...(xml.match(/<Contents>[\s\S]*?<\/Contents>/g)?.flatMap((c) => xmlValues(c, 'Key')) ?? []));
      prefixes.push(
        ...(xml.match(/<CommonPrefixes>[\s\S]*?<\/CommonPrefixes>/g)?.flatMap((c) => xmlValues(c, 'Prefix')) ?? []),
      );
      token = xmlValues(xml, 'IsTruncated')[0] === 'true' ? xmlValues(xml, 'NextContinuationToken')[0] : undefined;
    } while (token);
    return { keys, prefixes };
  }

  async list(prefix: string): Promise<string[]> {
    const full = `${this.objectKey(prefix).replace(/\/+$/, '')}/`;
    const { keys, prefixes } = await this.listRaw(full, true);
    const names = [...keys, ...prefixes].map((k) => k.slice(full.length).replace(/\/$/, '')).filter(Boolean);
    return [...new Set(names)].sort();
  }

  async deletePrefix(prefix: string): Promise<void> {
    const exact = this.objectKey(prefix);
    const { keys } = await this.listRaw(`${exact.replace(/\/+$/, '')}/`, false);
    for (const key of [exact, ...keys]) {
      const res = await this.send(`${this.base}/${key.split('/').map(encodeURIComponent).join('/')}`, {
        method: 'DELETE',
      });
      if (!res.ok && res.status !== 404) await this.check(res, `DELETE ${key}`);
    }
  }
}

export function s3OptionsFromEnv(): S3Options | undefined {
  return config.s3;
}
