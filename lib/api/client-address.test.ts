import { describe, expect, it } from 'vitest';
import { CLIENT_ADDRESS, clientAddress, resolveClientAddress } from './client-address';

describe('the client address', () => {
  it("is the socket's with no proxy trusted, whatever X-Forwarded-For says", () => {
    expect(resolveClientAddress('203.0.113.9', '198.51.100.1', 0)).toBe('203.0.113.9');
    expect(resolveClientAddress('203.0.113.9', undefined, 0)).toBe('203.0.113.9');
    // A dual-stack socket's IPv4 client is one address, however Node spells it.
    expect(resolveClientAddress('::ffff:203.0.113.9', undefined, 0)).toBe('203.0.113.9');
    expect(resolveClientAddress('2001:db8::1', undefined, 0)).toBe('2001:db8::1');
    expect(resolveClientAddress(undefined, undefined, 0)).toBeNull();
  });

  it('behind N trusted proxies, is the entry the outermost one wrote, never one the client wrote before it', () => {
    // The client forged 198.51.100.1; the proxy appended what it saw (192.0.2.5), then connected from 10.0.0.2.
    expect(resolveClientAddress('10.0.0.2', '198.51.100.1, 192.0.2.5', 1)).toBe('192.0.2.5');
    // Two proxies: the outer one (which the client reached) wrote 192.0.2.5, the inner one 10.0.0.1.
    expect(resolveClientAddress('10.0.0.2', '198.51.100.1, 192.0.2.5, 10.0.0.1', 2)).toBe('192.0.2.5');
    expect(resolveClientAddress('10.0.0.2', ['198.51.100.1', '192.0.2.5'], 1)).toBe('192.0.2.5');
    // No header (a client that reached the server past the proxy): the socket.
    expect(resolveClientAddress('10.0.0.2', undefined, 1)).toBe('10.0.0.2');
    // Fewer entries than proxies: the leftmost is all there is.
    expect(resolveClientAddress('10.0.0.2', '192.0.2.5', 3)).toBe('192.0.2.5');
  });

  it('is what the server resolved for a Request it made, else the last X-Forwarded-For entry', () => {
    const forged = new Request('http://x/', { headers: { 'x-forwarded-for': '198.51.100.1' } });
    expect(clientAddress(forged)).toBe('198.51.100.1');
    Object.assign(forged, { [CLIENT_ADDRESS]: '203.0.113.9' });
    expect(clientAddress(forged)).toBe('203.0.113.9');
    expect(clientAddress(Object.assign(new Request('http://x/'), { [CLIENT_ADDRESS]: null }))).toBeNull();
    expect(clientAddress(new Request('http://x/'))).toBeNull();
  });
});
