import Link from 'next/link';
import { Fragment } from 'react';
import { BreakableText } from '@/components/ui/breakable-text';
import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { loraParts, openRequestsParts } from '@/lib/client/tinker/tinker-format';
import type { TinkerTrainingClientDto } from '@/lib/schemas/tinker-clients';
import { TinkerClientStatus } from './client-status';

/** Rank on one line, the trained parts under it: the two settings a person compares between training clients. */
export function LoraCell({ lora }: { lora: TinkerTrainingClientDto['lora'] }) {
  const parts = loraParts(lora);
  return (
    <span className="block">
      <span className="whitespace-nowrap text-fg">rank {lora.rank}</span>
      <span className="block text-xs text-fg-muted">{parts.length > 0 ? parts.join(' · ') : 'no parts'}</span>
    </span>
  );
}

/**
 * The Jobs page's Tinker training clients (docs/tinker.md), live ones first as the API lists them: each a model
 * trained call by call through the SDK, on a Python worker that holds its LoRA state.
 */
export function TinkerClientsTable({
  clients,
  modelHref,
}: {
  clients: TinkerTrainingClientDto[];
  modelHref: (client: TinkerTrainingClientDto) => string;
}) {
  return (
    <Table stacked data-testid="tinker-clients-table">
      <caption className="sr-only">Tinker training clients, live ones first</caption>
      <thead>
        <tr>
          <Th>Model</Th>
          <Th>Status</Th>
          <Th>LoRA</Th>
          <Th className="text-right">Optim steps</Th>
          <Th>Open requests</Th>
          <Th>SDK</Th>
          <Th className="text-right">Last request</Th>
        </tr>
      </thead>
      <tbody>
        {clients.map((c) => {
          const open = openRequestsParts(c);
          return (
            <Tr
              key={c.model_id}
              data-testid="tinker-client-row"
              data-status={c.status}
              className="transition-colors hover:bg-surface-muted/50"
            >
              {/* Names are `<base>-<session>-<n>`: they wrap at their hyphens rather than widen the table. */}
              <Td label="Model">
                <Link
                  href={modelHref(c)}
                  className="font-medium text-fg hover:text-accent-text hover:underline"
                  data-testid="tinker-client-model"
                >
                  {c.model_name}
                </Link>
                <div className="mt-0.5 text-xs text-fg-subtle">
                  {c.project} · from{' '}
                  <span className="font-mono text-fg-muted" data-testid="tinker-client-base">
                    <BreakableText text={c.base_model} />
                  </span>
                </div>
              </Td>
              <Td label="Status">
                <TinkerClientStatus client={c} compact />
              </Td>
              <Td label="LoRA">
                <LoraCell lora={c.lora} />
              </Td>
              <Td label="Optim steps" className="text-right text-fg tabular-nums" data-testid="tinker-client-steps">
                {c.optim_steps.toLocaleString('en')}
              </Td>
              <Td label="Open requests" className="text-xs text-fg-muted" data-testid="tinker-client-open">
                {open.length === 0 ? (
                  <span className="text-fg-subtle">none</span>
                ) : (
                  // Wraps between the counts, never inside one ("1 running ·" / "3 queued").
                  <span>
                    {open.map((part, i) => (
                      <Fragment key={part}>
                        {i > 0 ? ' · ' : null}
                        <span className="whitespace-nowrap">{part}</span>
                      </Fragment>
                    ))}
                  </span>
                )}
              </Td>
              <Td label="SDK" className="font-mono text-xs whitespace-nowrap text-fg-muted">
                {c.sdk_version ?? '—'}
              </Td>
              <Td label="Last request" className="text-right whitespace-nowrap text-fg-muted">
                <RelativeTime iso={c.last_request_at} />
              </Td>
            </Tr>
          );
        })}
      </tbody>
    </Table>
  );
}
