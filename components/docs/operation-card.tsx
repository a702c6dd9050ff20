import type { ReactNode } from 'react';
import { Badge } from '@/components/ui/badge';
import { ChevronRightIcon } from '@/components/ui/icons';
import { schemaTypeLabel, type Operation } from '@/lib/client/api/openapi-document';
import { InlineMarkdown } from './inline-markdown';
import { MethodBadge, StatusBadge } from './method-badge';
import { SchemaJson } from './schema-json';

function SectionTitle({ children }: { children: ReactNode }) {
  return <h4 className="mb-2 text-xs font-semibold tracking-wide text-fg-subtle uppercase">{children}</h4>;
}

/** One operation as a native disclosure: collapsed it is a one-line index entry, open it is the reference. */
export function OperationCard({ operation, doc }: { operation: Operation; doc: unknown }) {
  const op = operation;
  return (
    <details
      id={op.id}
      className="group rounded-lg border border-line bg-surface open:shadow-xs"
      data-testid="api-operation"
    >
      <summary className="flex cursor-pointer list-none items-center gap-3 rounded-lg px-3.5 py-2.5 hover:bg-surface-muted/60 [&::-webkit-details-marker]:hidden">
        <ChevronRightIcon className="size-4 shrink-0 text-fg-subtle transition-transform group-open:rotate-90" />
        <MethodBadge method={op.method} />
        {/* Paths wrap only on small screens, where the summary is hidden and the path has the row to itself. */}
        <code className="min-w-0 font-mono text-[13px] font-medium break-all text-fg md:shrink-0 md:break-normal md:whitespace-nowrap">
          {op.path}
        </code>
        {op.summary ? (
          <span className="hidden min-w-0 flex-1 truncate text-sm text-fg-muted md:block">{op.summary}</span>
        ) : null}
        {op.deprecated ? <Badge tone="warning">deprecated</Badge> : null}
      </summary>
      <div className="flex flex-col gap-5 border-t border-line px-4 py-4 sm:px-5">
        {op.summary || op.description ? (
          <div className="text-sm text-fg-muted">
            {op.summary ? <p className="font-medium text-fg md:hidden">{op.summary}</p> : null}
            {op.description ? (
              <p className="whitespace-pre-line">
                <InlineMarkdown text={op.description} />
              </p>
            ) : null}
          </div>
        ) : null}

        {op.parameters.length > 0 ? (
          <section>
            <SectionTitle>Parameters</SectionTitle>
            <div className="relative overflow-x-auto rounded-lg border border-line">
              <table className="w-full text-left text-sm">
                <thead className="bg-surface-muted/70 text-xs text-fg-subtle">
                  <tr>
                    <th scope="col" className="px-3 py-2 font-medium">
                      Name
                    </th>
                    <th scope="col" className="px-3 py-2 font-medium">
                      In
                    </th>
                    <th scope="col" className="px-3 py-2 font-medium">
                      Type
                    </th>
                    <th scope="col" className="px-3 py-2 font-medium">
                      Description
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {op.parameters.map((p) => (
                    <tr key={`${p.in}-${p.name}`} className="border-t border-line align-top">
                      <td className="px-3 py-2 whitespace-nowrap">
                        <code className="font-mono text-[13px] text-fg">{p.name}</code>
                        {p.required ? (
                          <span className="ml-1.5 text-xs font-medium text-danger-text">required</span>
                        ) : null}
                      </td>
                      <td className="px-3 py-2 text-fg-muted">{p.in}</td>
                      <td className="px-3 py-2 font-mono text-xs text-fg-muted">{schemaTypeLabel(p.schema)}</td>
                      <td className="px-3 py-2 text-fg-muted">
                        {p.description ? <InlineMarkdown text={p.description} /> : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        ) : null}

        {op.requestBody ? (
          <section>
            <SectionTitle>
              Request body{' '}
              <span className="font-mono font-normal normal-case">
                {op.requestBody.contentType}
                {op.requestBody.required ? ' · required' : ''}
              </span>
            </SectionTitle>
            {op.requestBody.description ? (
              <p className="mb-2 text-sm text-fg-muted">{op.requestBody.description}</p>
            ) : null}
            <SchemaJson
              doc={doc}
              schema={op.requestBody.schema}
              label={`Request body schema of ${op.method.toUpperCase()} ${op.path}`}
            />
          </section>
        ) : null}

        {op.responses.length > 0 ? (
          <section>
            <SectionTitle>Responses</SectionTitle>
            <ul className="flex flex-col gap-3">
              {op.responses.map((r) => (
                <li key={r.status}>
                  <div className="mb-1.5 flex items-center gap-2 text-sm">
                    <StatusBadge status={r.status} />
                    <span className="text-fg-muted">
                      {r.description ? <InlineMarkdown text={r.description} /> : null}
                    </span>
                  </div>
                  {r.body?.schema !== undefined ? (
                    <SchemaJson
                      doc={doc}
                      schema={r.body.schema}
                      label={`Response ${r.status} schema of ${op.method.toUpperCase()} ${op.path}`}
                    />
                  ) : null}
                </li>
              ))}
            </ul>
          </section>
        ) : null}
      </div>
    </details>
  );
}
