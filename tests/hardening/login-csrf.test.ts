import { describe, expect, it } from 'vitest';
import * as signInRoute from '@/app/v1/auth/sign-in/route';
import * as signUpRoute from '@/app/v1/auth/sign-up/route';
import { call, createUser, uniqueName } from '../support/helpers';

const EVIL = { origin: 'https://evil.example', host: 'localhost:3000' };

/** Login CSRF: another site must not be able to sign a victim's browser into the attacker's account. */
describe('cookie-setting routes refuse cross-site requests', () => {
  it('refuses a cross-site text/plain form post to sign-in (parsed as JSON before)', async () => {
    const user = await createUser();
    const res = await call(signInRoute, 'POST', '/v1/auth/sign-in', {
      rawBody: JSON.stringify({ email: user.email, password: user.password }),
      headers: { 'content-type': 'text/plain', ...EVIL, 'sec-fetch-site': 'cross-site' },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a cross-site JSON sign-in by Origin alone and by Sec-Fetch-Site alone', async () => {
    const user = await createUser();
    const body = { email: user.email, password: user.password };
    const byOrigin = await call(signInRoute, 'POST', '/v1/auth/sign-in', { body, headers: EVIL });
    expect(byOrigin.status).toBe(403);
    const bySite = await call(signInRoute, 'POST', '/v1/auth/sign-in', {
      body,
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(bySite.status).toBe(403);
    const sameSite = await call(signInRoute, 'POST', '/v1/auth/sign-in', {
      body,
      headers: { 'sec-fetch-site': 'same-site' },
    });
    expect(sameSite.status).toBe(403);
  });

  it('refuses a cross-site sign-up', async () => {
    const res = await call(signUpRoute, 'POST', '/v1/auth/sign-up', {
      body: { email: `${uniqueName('c-')}@example.test`, password: 'long enough pw' },
      headers: EVIL,
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('takes the body as JSON only with a JSON content type', async () => {
    const user = await createUser();
    const res = await call(signInRoute, 'POST', '/v1/auth/sign-in', {
      rawBody: JSON.stringify({ email: user.email, password: user.password }),
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(415);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('still signs in from our own pages and from scripts (no Origin, no Sec-Fetch-Site)', async () => {
    const user = await createUser();
    const body = { email: user.email, password: user.password };
    const page = await call(signInRoute, 'POST', '/v1/auth/sign-in', {
      body,
      headers: { origin: 'http://localhost:3000', host: 'localhost:3000', 'sec-fetch-site': 'same-origin' },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('set-cookie')).toMatch(/^tb_session=/);
    const script = await call(signInRoute, 'POST', '/v1/auth/sign-in', { body });
    expect(script.status).toBe(200);
  });
});
