import type { SessionDto } from '@/lib/schemas/accounts';

/**
 * The selected entity (personal account or team) lives in the URL as `?entity=<name>`: links and
 * reloads keep it, two tabs can show two entities, and every dashboard page can read it without
 * shared client state. Absent or unknown → the user's personal entity, which is never written out.
 */
export const ENTITY_PARAM = 'entity';

type EntityScope = Pick<SessionDto, 'default_entity' | 'entities'>;

export function resolveEntity(session: EntityScope, requested: string | null | undefined): string {
  if (requested && session.entities.some((e) => e.name === requested)) return requested;
  return session.default_entity;
}

/** `href` with the entity parameter set, or removed when it is the default one. */
export function hrefWithEntity(href: string, entity: string, defaultEntity: string): string {
  const [path, query = ''] = href.split('?');
  const params = new URLSearchParams(query);
  if (entity === defaultEntity) params.delete(ENTITY_PARAM);
  else params.set(ENTITY_PARAM, entity);
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}
