import { describe, expect, it } from 'vitest';
import { safeNextPath, signInPath } from './redirect-target';

describe('safeNextPath', () => {
  it.each([
    ['/settings/teams?entity=lab', '/settings/teams?entity=lab'],
    ['https://evil.example/', '/models'],
    ['//evil.example/', '/models'],
    ['/\\evil.example', '/models'],
    ['javascript:alert(1)', '/models'],
    ['/v1/auth/session', '/models'],
    [null, '/models'],
  ])('%s → %s', (raw, expected) => {
    expect(safeNextPath(raw)).toBe(expected);
  });

  it('omits the default target from the sign-in link', () => {
    expect(signInPath('/models')).toBe('/sign-in');
    expect(signInPath('/docs')).toBe('/sign-in?next=%2Fdocs');
  });
});
