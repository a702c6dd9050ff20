'use client';

import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { ChevronsUpDownIcon } from '@/components/ui/icons';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import type { SessionDto } from '@/lib/schemas/accounts';
import { Avatar } from './avatar';

interface EntitySwitcherProps {
  session: SessionDto;
  selected: string;
  id: string;
}

/** A native select: keyboard, screen reader and mobile pickers all work without extra code. */
export function EntitySwitcher({ session, selected, id }: EntitySwitcherProps) {
  const router = useRouter();
  const pathname = usePathname();
  const searchParams = useSearchParams();
  const personal = session.entities.filter((e) => e.kind === 'user');
  const teams = session.entities.filter((e) => e.kind === 'team');

  function change(entity: string) {
    const params = new URLSearchParams(searchParams.toString());
    // Filters and cursors belong to the entity being left.
    params.delete('search');
    const query = params.toString();
    router.push(hrefWithEntity(query ? `${pathname}?${query}` : pathname, entity, session.default_entity));
  }

  return (
    <div>
      <label htmlFor={id} className="mb-1.5 block px-1 text-[11px] font-medium tracking-wider text-fg-subtle uppercase">
        Entity
      </label>
      <div className="relative">
        <Avatar
          name={selected}
          square
          className="pointer-events-none absolute top-1/2 left-1.5 size-7 -translate-y-1/2"
        />
        <select
          id={id}
          value={selected}
          onChange={(event) => change(event.target.value)}
          data-testid="entity-switcher"
          className="h-10 w-full cursor-pointer appearance-none truncate rounded-lg border border-line bg-surface pr-9 pl-11 text-sm font-medium text-fg shadow-xs transition-colors hover:bg-surface-muted focus:border-accent focus:ring-3 focus:ring-accent/20 focus:outline-none"
        >
          <optgroup label="Personal">
            {personal.map((e) => (
              <option key={e.id} value={e.name}>
                {e.name}
              </option>
            ))}
          </optgroup>
          {teams.length > 0 ? (
            <optgroup label="Teams">
              {teams.map((e) => (
                <option key={e.id} value={e.name}>
                  {e.name}
                </option>
              ))}
            </optgroup>
          ) : null}
        </select>
        <ChevronsUpDownIcon className="pointer-events-none absolute top-1/2 right-3 size-4 -translate-y-1/2 text-fg-subtle" />
      </div>
    </div>
  );
}
