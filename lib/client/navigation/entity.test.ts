import { describe, expect, it } from 'vitest';
import { hrefWithEntity, resolveEntity } from './entity';

const session = {
  default_entity: 'ada',
  entities: [
    { id: '00000000-0000-0000-0000-000000000001', name: 'ada', kind: 'user' as const, role: 'owner' as const },
    { id: '00000000-0000-0000-0000-000000000002', name: 'lab', kind: 'team' as const, role: 'member' as const },
  ],
};

describe('resolveEntity', () => {
  it('accepts one of the user’s entities and falls back to the personal one', () => {
    expect(resolveEntity(session, 'lab')).toBe('lab');
    expect(resolveEntity(session, 'someone-else')).toBe('ada');
    expect(resolveEntity(session, null)).toBe('ada');
  });
});

describe('hrefWithEntity', () => {
  it('writes the entity only when it is not the default', () => {
    expect(hrefWithEntity('/models', 'lab', 'ada')).toBe('/models?entity=lab');
    expect(hrefWithEntity('/models?entity=lab&search=x', 'ada', 'ada')).toBe('/models?search=x');
  });
});
