'use client';

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiKeyCreateForm } from '@/components/settings/api-key-create-form';
import { ApiKeyTable } from '@/components/settings/api-key-table';
import { NewApiKeyNotice } from '@/components/settings/new-api-key-notice';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { CodeBlock } from '@/components/ui/code-block';
import { ConfirmDialog } from '@/components/ui/confirm-dialog';
import { EmptyState } from '@/components/ui/empty-state';
import { KeyIcon } from '@/components/ui/icons';
import { Skeleton } from '@/components/ui/skeleton';
import { useCreateApiKey, useRevokeApiKey } from '@/lib/client/queries/mutations';
import { apiKeysQuery } from '@/lib/client/queries/accounts';
import type { ApiKeyDto } from '@/lib/schemas/accounts';

export function ApiKeysClient({ origin }: { origin: string }) {
  const keys = useQuery(apiKeysQuery());
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [toRevoke, setToRevoke] = useState<ApiKeyDto | null>(null);
  const create = useCreateApiKey();
  const revoke = useRevokeApiKey();

  const list = keys.data?.data ?? [];

  return (
    <div className="flex flex-col gap-6">
      <Card aria-labelledby="create-key-title">
        <CardHeader
          id="create-key-title"
          title="Create an API key"
          description="Keys authenticate scripts, training clients and the OpenAI-compatible endpoints as you."
        />
        <CardBody className="flex flex-col gap-5">
          {created ? (
            <NewApiKeyNotice name={created.name} secret={created.key} onDismiss={() => setCreated(null)} />
          ) : null}
          <ApiKeyCreateForm
            onSubmit={async (body) => {
              setCreated(null);
              const key = await create.mutateAsync(body);
              setCreated({ name: key.name, key: key.key });
            }}
          />
        </CardBody>
      </Card>

      <Card aria-labelledby="keys-title">
        <CardHeader
          id="keys-title"
          title="Your API keys"
          description="Revoked keys stay listed so you can tell what stopped working."
        />
        {keys.isPending ? (
          <div className="flex flex-col gap-3 px-5 py-5" aria-busy="true" aria-label="Loading API keys">
            <Skeleton className="h-5 w-2/3" />
            <Skeleton className="h-5 w-1/2" />
          </div>
        ) : keys.isError ? (
          <CardBody>
            <RetryAlert title="Could not load your API keys" onRetry={() => keys.refetch()}>
              {keys.error.message}
            </RetryAlert>
          </CardBody>
        ) : list.length === 0 ? (
          <EmptyState
            icon={<KeyIcon className="size-5" />}
            title="No API keys yet"
            description="Create one above to call the API from a script or a training client."
          />
        ) : (
          <ApiKeyTable keys={list} onRevoke={(key) => setToRevoke(key)} />
        )}
      </Card>

      <Card aria-labelledby="use-key-title">
        <CardHeader
          id="use-key-title"
          title="Using a key"
          description="Send it as a bearer token with every request."
        />
        <CardBody>
          <CodeBlock
            label="Terminal"
            code={`export TUNEBOARD_API_KEY=tb_…\ncurl ${origin}/v1/auth/session \\\n  -H "Authorization: Bearer $TUNEBOARD_API_KEY"`}
          />
        </CardBody>
      </Card>

      <ConfirmDialog
        open={toRevoke !== null}
        title={`Revoke “${toRevoke?.name ?? ''}”?`}
        description={
          <>
            Anything using <code className="font-mono text-fg">{toRevoke?.prefix}…</code> will be refused from now on.
            This cannot be undone.
          </>
        }
        confirmLabel="Revoke key"
        pending={revoke.isPending}
        error={revoke.error?.message}
        onConfirm={() => toRevoke && revoke.mutate(toRevoke.id, { onSuccess: () => setToRevoke(null) })}
        onCancel={() => {
          setToRevoke(null);
          revoke.reset();
        }}
      />
    </div>
  );
}
