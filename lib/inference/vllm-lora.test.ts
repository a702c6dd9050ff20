import { describe, expect, it } from 'vitest';
import type { UpstreamServer } from './upstream';
import { VllmAdapterManager } from './vllm-lora';

/** A vLLM adapter API that records calls and answers after a tick, as a real server would. */
function fakeServer() {
  const calls: string[] = [];
  const loaded = new Set<string>();
  const server: UpstreamServer = {
    baseUrl: 'http://vllm.test/v1',
    fetch: (async (url: string, init: RequestInit) => {
      await new Promise((r) => setTimeout(r, 5));
      const { lora_name } = JSON.parse(String(init.body)) as { lora_name: string };
      const op = url.endsWith('/load_lora_adapter') ? 'load' : 'unload';
      calls.push(`${op} ${lora_name}`);
      if (op === 'load') loaded.add(lora_name);
      else loaded.delete(lora_name);
      return new Response('Success', { status: 200 });
    }) as typeof fetch,
  };
  return { server, calls, loaded };
}

const source = (name: string) => ({ name, materialize: async () => `/adapters/${name}` });

describe('VllmAdapterManager', () => {
  it('loads an adapter once however many requests wait for it', async () => {
    const { server, calls } = fakeServer();
    const m = new VllmAdapterManager(
      () => server,
      () => 4,
    );
    await Promise.all([m.ensure(source('a')), m.ensure(source('a')), m.ensure(source('a'))]);
    expect(calls).toEqual(['load a']);
  });

  it('keeps at most max adapters, unloading the least recently used, also under concurrent loads', async () => {
    const { server, calls, loaded } = fakeServer();
    const m = new VllmAdapterManager(
      () => server,
      () => 2,
    );
    await m.ensure(source('a'));
    await m.ensure(source('b'));
    await m.ensure(source('a'));
    await m.ensure(source('c'));
    expect(calls.slice(-2)).toEqual(['unload b', 'load c']);
    expect(m.loadedNames()).toEqual(['a', 'c']);
    await Promise.all([m.ensure(source('d')), m.ensure(source('e'))]);
    expect(loaded.size).toBeLessThanOrEqual(2);
    expect(m.loadedNames().sort()).toEqual(['d', 'e']);
  });

  it('says what to configure when there is no vLLM server', async () => {
    const m = new VllmAdapterManager(
      () => undefined,
      () => 2,
    );
    await expect(m.ensure(source('a'))).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining('TUNEBOARD_UPSTREAM_URL'),
    });
  });
});
