import type { Metadata } from 'next';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { requirePrincipal } from '@/app/_lib/session';
import { Avatar } from '@/components/shell/avatar';
import { ROLE_TONE } from '@/components/settings/role-tone';
import { Badge } from '@/components/ui/badge';
import { Card, CardHeader } from '@/components/ui/card';
import { CopyButton } from '@/components/ui/copy-button';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import { toSessionDto } from '@/lib/services/accounts';

export const metadata: Metadata = { title: 'Profile' };

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="grid gap-1 px-5 py-3.5 sm:grid-cols-[10rem_minmax(0,1fr)] sm:gap-4">
      <dt className="text-sm text-fg-subtle">{label}</dt>
      <dd className="min-w-0 text-sm text-fg">{children}</dd>
    </div>
  );
}

export default async function ProfilePage() {
  const session = toSessionDto(await requirePrincipal());
  const { user } = session;
  return (
    <div className="flex flex-col gap-6">
      <Card aria-labelledby="account-title">
        <CardHeader id="account-title" title="Account" description="Who you are signed in as." />
        <div className="flex items-center gap-4 border-b border-line px-5 py-5">
          <Avatar name={user.name || user.email} className="size-12 text-sm" />
          <div className="min-w-0">
            <p className="truncate text-base font-semibold text-fg">{user.name}</p>
            <p className="truncate text-sm text-fg-muted" data-testid="profile-email">
              {user.email}
            </p>
          </div>
        </div>
        <dl className="divide-y divide-line">
          <Row label="Username">
            <code className="font-mono text-[13px]">{session.default_entity}</code>
            <span className="ml-2 text-xs text-fg-subtle">your personal entity in model names</span>
          </Row>
          <Row label="User ID">
            <span className="flex items-center gap-2">
              <code className="truncate font-mono text-[13px] text-fg-muted">{user.id}</code>
              <CopyButton value={user.id} iconOnly ariaLabel="Copy user ID" variant="ghost" />
            </span>
          </Row>
        </dl>
      </Card>

      <Card aria-labelledby="memberships-title">
        <CardHeader
          id="memberships-title"
          title="Entities"
          description="Where you can create and see models. Manage teams under Teams."
        />
        <ul className="divide-y divide-line">
          {session.entities.map((entity) => (
            <li key={entity.id} className="flex items-center justify-between gap-3 px-5 py-3">
              <div className="flex min-w-0 items-center gap-3">
                <Avatar name={entity.name} square className="size-7 text-[10px]" />
                <div className="min-w-0">
                  <p className="truncate text-sm font-medium text-fg">{entity.name}</p>
                  <p className="text-xs text-fg-subtle">{entity.kind === 'user' ? 'Personal' : 'Team'}</p>
                </div>
              </div>
              <div className="flex items-center gap-3">
                <Badge tone={ROLE_TONE[entity.role]}>{entity.role}</Badge>
                <Link
                  href={hrefWithEntity('/models', entity.name, session.default_entity)}
                  className="text-sm font-medium text-accent-text hover:underline"
                >
                  Models<span className="sr-only"> of {entity.name}</span>
                </Link>
              </div>
            </li>
          ))}
        </ul>
      </Card>
    </div>
  );
}
