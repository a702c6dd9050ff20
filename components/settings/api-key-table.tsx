'use client';

import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { cx } from '@/components/ui/cx';
import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { useNow } from '@/lib/client/hooks/use-now';
import type { ApiKeyDto } from '@/lib/schemas/accounts';

type KeyStatus = 'active' | 'expired' | 'revoked';

export function apiKeyStatus(key: ApiKeyDto, now: number | null): KeyStatus {
  if (key.revoked_at) return 'revoked';
  if (key.expires_at && now !== null && new Date(key.expires_at).getTime() <= now) return 'expired';
  return 'active';
}

const STATUS_BADGE = {
  active: { tone: 'success', label: 'Active' },
  expired: { tone: 'warning', label: 'Expired' },
  revoked: { tone: 'danger', label: 'Revoked' },
} as const;

interface ApiKeyTableProps {
  keys: ApiKeyDto[];
  onRevoke: (key: ApiKeyDto) => void;
}

export function ApiKeyTable({ keys, onRevoke }: ApiKeyTableProps) {
  const now = useNow();
  return (
    <Table stacked data-testid="api-keys-table">
      <caption className="sr-only">Your API keys</caption>
      <thead>
        <tr>
          <Th>Name</Th>
          <Th>Key</Th>
          <Th>Created</Th>
          <Th>Last used</Th>
          <Th>Expires</Th>
          <Th>Status</Th>
          <Th>
            <span className="sr-only">Actions</span>
          </Th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => {
          const status = apiKeyStatus(key, now);
          const badge = STATUS_BADGE[status];
          return (
            <Tr key={key.id} data-testid="api-key-row" data-key-status={status}>
              {/* May wrap at the name's hyphens: on one line a long key name held the table wider than its card. */}
              <Td label="Name" className={cx('font-medium', status === 'active' ? 'text-fg' : 'text-fg-muted')}>
                {key.name}
              </Td>
              <Td label="Key">
                <code className="rounded bg-surface-muted px-1.5 py-0.5 font-mono text-xs text-fg-muted">
                  {key.prefix}…
                </code>
              </Td>
              <Td label="Created" className="whitespace-nowrap text-fg-muted">
                <RelativeTime iso={key.created_at} />
              </Td>
              <Td label="Last used" className="whitespace-nowrap text-fg-muted">
                {key.last_used_at ? (
                  <RelativeTime iso={key.last_used_at} />
                ) : (
                  <span className="text-fg-subtle">Never</span>
                )}
              </Td>
              <Td label="Expires" className="whitespace-nowrap text-fg-muted">
                {key.expires_at ? <RelativeTime iso={key.expires_at} /> : <span className="text-fg-subtle">Never</span>}
              </Td>
              <Td label="Status">
                <Badge tone={badge.tone}>{badge.label}</Badge>
              </Td>
              <Td className="text-right">
                {status === 'revoked' ? null : (
                  <Button variant="danger-ghost" size="sm" onClick={() => onRevoke(key)} data-testid="revoke-api-key">
                    Revoke<span className="sr-only"> {key.name}</span>
                  </Button>
                )}
              </Td>
            </Tr>
          );
        })}
      </tbody>
    </Table>
  );
}
