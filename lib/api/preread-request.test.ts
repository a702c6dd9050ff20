import { describe, expect, it } from 'vitest';
import { ClientSignal, PrereadRequest } from './preread-request';

// Each behaviour is checked against undici's Request made from the same method, URL, headers and body: handlers
// must not be able to tell the two apart.
const URL_TEXT = 'http://127.0.0.1:3000/v1/things?x=1';
const BODY = '\ufeff{"a":"héllo","b":[1,2]}';

function both(body: string | null = BODY, method = 'POST') {
  const headers = { 'content-type': 'application/json', authorization: 'Bearer k' };
  const bytes = body === null ? null : Buffer.from(body);
  return {
    light: new PrereadRequest(method, URL_TEXT, new Headers(headers), bytes, new ClientSignal()) as unknown as Request,
    real: new Request(URL_TEXT, { method, headers, body: bytes ?? undefined }),
  };
}

describe('PrereadRequest', () => {
  it('has the members a Request has, with the same values', () => {
    const { light, real } = both();
    for (const key of [
      'method',
      'url',
      'cache',
      'credentials',
      'destination',
      'integrity',
      'keepalive',
      'mode',
    ] as const)
      expect([key, light[key]]).toEqual([key, real[key]]);
    for (const key of ['redirect', 'referrer', 'referrerPolicy', 'bodyUsed'] as const)
      expect([key, light[key]]).toEqual([key, real[key]]);
    expect([...light.headers]).toEqual([...real.headers]);
    expect(Object.prototype.toString.call(light)).toBe(Object.prototype.toString.call(real));
    expect(light.signal.aborted).toBe(false);
  });

  it('reads its body as text, JSON, bytes or a blob once, as a Request does (a leading BOM dropped)', async () => {
    for (const read of ['text', 'json', 'arrayBuffer', 'bytes', 'blob'] as const) {
      const { light, real } = both();
      const [a, b] = [await light[read](), await real[read]()];
      if (read === 'blob') {
        expect((a as Blob).type).toBe((b as Blob).type);
        expect(await (a as Blob).text()).toBe(await (b as Blob).text());
      } else if (read === 'arrayBuffer' || read === 'bytes') {
        expect(Buffer.from(a as ArrayBuffer)).toEqual(Buffer.from(b as ArrayBuffer));
      } else expect(a).toEqual(b);
      expect(light.bodyUsed).toBe(true);
      await expect(light.text()).rejects.toThrow(TypeError);
      await expect(real.text()).rejects.toThrow(TypeError);
    }
  });

  it('gives its body as a stream, after which it is used', async () => {
    const { light, real } = both();
    expect(await new Response(light.body).text()).toBe(await new Response(real.body).text());
    expect(light.bodyUsed).toBe(real.bodyUsed);
    await expect(light.text()).rejects.toThrow(TypeError);
  });

  it('has a null body and an empty text without one', async () => {
    const { light, real } = both(null, 'DELETE');
    expect(light.body).toBe(real.body);
    expect(await light.text()).toBe(await real.text());
  });

  it('clones before its body is read, and not after', async () => {
    const { light } = both();
    const copy = light.clone();
    expect(await copy.text()).toBe(await light.text());
    expect(() => light.clone()).toThrow(TypeError);
  });

  it('parses a multipart body', async () => {
    const form = new FormData();
    form.set('name', 'value');
    const encoded = new Response(form);
    const type = encoded.headers.get('content-type')!;
    const body = Buffer.from(await encoded.arrayBuffer());
    const light = new PrereadRequest('POST', URL_TEXT, new Headers({ 'content-type': type }), body, new ClientSignal());
    expect((await light.formData()).get('name')).toBe('value');
  });

  it('aborts its signal when the client goes away, whether or not the handler looked at it first', () => {
    const early = new ClientSignal();
    const request = new PrereadRequest('GET', URL_TEXT, new Headers(), null, early);
    const signal = request.signal;
    early.clientGone();
    expect(signal.aborted).toBe(true);
    const late = new ClientSignal();
    late.clientGone();
    expect(new PrereadRequest('GET', URL_TEXT, new Headers(), null, late).signal.aborted).toBe(true);
  });
});
