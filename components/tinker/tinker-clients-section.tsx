'use client';

import Link from 'next/link';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { RetryAlert } from '@/components/ui/retry-alert';
import { isLiveClient } from '@/lib/client/tinker/tinker-clients';
import { TINKER_CLIENTS_LIMIT } from '@/lib/client/queries/tinker';
import type { TinkerTrainingClientDto } from '@/lib/schemas/tinker-clients';
import { TinkerClientsTable } from './tinker-clients-table';

const code = 'rounded bg-surface-muted px-1 py-0.5 font-mono text-[12.5px] text-fg';

/**
 * The Jobs page's card of Tinker training clients. The page owns the query (it places the card by whether there are
 * any); with none the card is one paragraph on how to start one, since the SDK is used from code, not from here.
 */
export function TinkerClientsSection({
  clients,
  isError,
  onRetry,
  origin,
  modelHref,
}: {
  clients: TinkerTrainingClientDto[];
  isError: boolean;
  onRetry: () => void;
  /** This server's origin, for the TINKER_BASE_URL to copy. */
  origin: string;
  modelHref: (client: TinkerTrainingClientDto) => string;
}) {
  const live = clients.filter(isLiveClient).length;
  return (
    <Card aria-labelledby="tinker-clients-title" data-testid="tinker-clients">
      <CardHeader
        id="tinker-clients-title"
        title="Tinker training clients"
        description={
          clients.length === 0
            ? undefined
            : `${live === 0 ? 'None live' : `${live} live`}; live ones first, then the most recently used${
                clients.length >= TINKER_CLIENTS_LIMIT ? ` (the latest ${TINKER_CLIENTS_LIMIT})` : ''
              }. Each is a model trained through the Tinker SDK on a Python worker; refreshes every few seconds while one is live.`
        }
      />
      {isError ? (
        <CardBody>
          <RetryAlert title="Could not load the Tinker training clients" onRetry={onRetry} />
        </CardBody>
      ) : clients.length === 0 ? (
        <CardBody>
          <p className="max-w-3xl text-sm text-fg-muted" data-testid="no-tinker-clients">
            None yet. Point Thinking Machines&apos; Tinker SDK at this server with{' '}
            <code className={code}>TINKER_BASE_URL={origin}</code> and{' '}
            <code className={code}>TINKER_API_KEY=tml-&lt;your API key&gt;</code> (
            <Link href="/settings/api-keys" className="text-accent-text hover:underline">
              API keys
            </Link>
            ); each <code className={code}>create_lora_training_client</code> is listed here and trains on a Python
            worker. See the{' '}
            <Link href="/docs#tag-tinker" className="text-accent-text hover:underline">
              Tinker routes in the API docs
            </Link>
            .
          </p>
        </CardBody>
      ) : (
        <TinkerClientsTable clients={clients} modelHref={modelHref} />
      )}
    </Card>
  );
}
