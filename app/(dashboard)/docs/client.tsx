'use client';

import { useQuery } from '@tanstack/react-query';
import { InlineMarkdown } from '@/components/docs/inline-markdown';
import { OpenApiReference } from '@/components/docs/openapi-reference';
import { RetryAlert } from '@/components/ui/retry-alert';
import { Badge } from '@/components/ui/badge';
import { buttonClassName } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { CodeBlock } from '@/components/ui/code-block';
import { PageHeader } from '@/components/ui/page-header';
import { Skeleton } from '@/components/ui/skeleton';
import { isApiClientError } from '@/lib/client/api/api-fetch';
import { openApiDocumentQuery } from '@/lib/client/queries/openapi';

function tokenCurl(origin: string): string {
  return [
    `curl -X POST ${origin}/v1/auth/token \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '{`,
    `    "email": "you@example.com",`,
    `    "password": "your-password",`,
    `    "key_name": "ci",`,
    `    "expires_in_days": 90`,
    `  }'`,
  ].join('\n');
}

const TOKEN_RESPONSE = `{
  "id": "…",
  "name": "ci",
  "prefix": "tb_AbC123",
  "key": "tb_AbC123…",
  "expires_at": "…",
  …
}`;

export function DocsClient({ origin }: { origin: string }) {
  const doc = useQuery(openApiDocumentQuery());

  return (
    <>
      <PageHeader
        title="API docs"
        description={
          <>
            Every endpoint under <code className="font-mono text-[13px]">/v1</code>, generated from the server’s own
            contract.
          </>
        }
        actions={
          <a
            href="/v1/openapi.json"
            target="_blank"
            rel="noreferrer"
            className={buttonClassName({ variant: 'secondary', size: 'sm' })}
          >
            openapi.json
          </a>
        }
      />

      <Card aria-labelledby="token-title" className="mb-10">
        <CardHeader
          id="token-title"
          title="Getting an API key from a script"
          description="For CI and headless machines: trade an email and password for a new API key, without a browser."
        />
        <CardBody className="grid gap-5 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
          <div className="min-w-0">
            <CodeBlock label="Request" code={tokenCurl(origin)} data-testid="token-curl" />
            <p className="mt-3 text-sm text-fg-muted">
              <code className="font-mono text-[13px]">key_name</code> and{' '}
              <code className="font-mono text-[13px]">expires_in_days</code> are optional. Each call creates a new key;
              revoke old ones under Settings → API keys.
            </p>
          </div>
          <div className="min-w-0">
            <CodeBlock label="Response · 201" code={TOKEN_RESPONSE} />
            <p className="mt-3 text-sm text-fg-muted">
              The <code className="font-mono text-[13px]">key</code> is returned once. Send it as{' '}
              <code className="font-mono text-[13px]">Authorization: Bearer tb_…</code>.
            </p>
          </div>
        </CardBody>
      </Card>

      {doc.isPending ? (
        <div aria-busy="true" aria-label="Loading the API reference" className="flex flex-col gap-3">
          <Skeleton className="h-7 w-48" />
          {Array.from({ length: 5 }, (_, i) => (
            <Skeleton key={i} className="h-11 w-full" />
          ))}
        </div>
      ) : doc.isError ? (
        <RetryAlert
          title="The API reference could not be loaded"
          onRetry={() => doc.refetch()}
          pending={doc.isFetching}
        >
          <p data-testid="openapi-error">
            {isApiClientError(doc.error) && doc.error.status === 404
              ? 'This server does not publish /v1/openapi.json yet.'
              : `GET /v1/openapi.json failed: ${doc.error.message}`}
          </p>
        </RetryAlert>
      ) : (
        <section aria-labelledby="reference-title">
          <div className="mb-6 flex flex-wrap items-center gap-2 border-b border-line pb-4">
            <h2 id="reference-title" className="text-xl font-semibold tracking-tight text-fg">
              {doc.data.info.title}
            </h2>
            <Badge tone="accent">v{doc.data.info.version}</Badge>
            <Badge>OpenAPI {doc.data.openapi}</Badge>
            {doc.data.info.description ? (
              <p className="w-full text-sm text-fg-muted">
                <InlineMarkdown text={doc.data.info.description} />
              </p>
            ) : null}
          </div>
          <OpenApiReference doc={doc.data} />
        </section>
      )}
    </>
  );
}
