'use client';

import { useMemo, useState } from 'react';
import { Badge } from '@/components/ui/badge';
import { EmptyState } from '@/components/ui/empty-state';
import { SearchIcon } from '@/components/ui/icons';
import { Input } from '@/components/ui/input';
import { groupOperationsByTag, type OpenApiDocument } from '@/lib/client/api/openapi-document';
import { InlineMarkdown } from './inline-markdown';
import { OperationCard } from './operation-card';

function tagAnchor(tag: string): string {
  return `tag-${tag.replace(/[^a-zA-Z0-9]+/g, '-').toLowerCase()}`;
}

export function OpenApiReference({ doc }: { doc: OpenApiDocument }) {
  const [filter, setFilter] = useState('');
  const groups = useMemo(() => groupOperationsByTag(doc), [doc]);
  const needle = filter.trim().toLowerCase();
  const visible = needle
    ? groups
        .map((g) => ({
          ...g,
          operations: g.operations.filter((op) =>
            `${op.method} ${op.path} ${op.summary ?? ''} ${g.tag}`.toLowerCase().includes(needle),
          ),
        }))
        .filter((g) => g.operations.length > 0)
    : groups;
  const total = groups.reduce((n, g) => n + g.operations.length, 0);

  return (
    <div className="grid gap-8 lg:grid-cols-[12rem_minmax(0,1fr)]">
      <nav aria-label="API sections" className="hidden lg:block">
        <div className="sticky top-24 xl:top-10">
          <p className="mb-2 px-2 text-[11px] font-medium tracking-wider text-fg-subtle uppercase">Sections</p>
          <ul className="flex flex-col gap-0.5">
            {groups.map((g) => (
              <li key={g.tag}>
                <a
                  href={`#${tagAnchor(g.tag)}`}
                  className="flex items-center justify-between rounded-md px-2 py-1.5 text-sm text-fg-muted hover:bg-surface-muted hover:text-fg"
                >
                  <span className="truncate">{g.tag}</span>
                  <span className="text-xs text-fg-subtle tabular-nums">{g.operations.length}</span>
                </a>
              </li>
            ))}
          </ul>
        </div>
      </nav>

      <div className="min-w-0">
        <div className="mb-6 flex flex-wrap items-center justify-between gap-3">
          <div role="search" className="relative w-full sm:max-w-xs">
            <label htmlFor="api-filter" className="sr-only">
              Filter operations
            </label>
            <SearchIcon className="pointer-events-none absolute top-1/2 left-3 size-4 -translate-y-1/2 text-fg-subtle" />
            <Input
              id="api-filter"
              type="search"
              placeholder="Filter by path or summary…"
              value={filter}
              onChange={(event) => setFilter(event.target.value)}
              className="pl-9"
            />
          </div>
          <p className="text-sm text-fg-subtle" aria-live="polite">
            {needle
              ? `${visible.reduce((n, g) => n + g.operations.length, 0)} of ${total} operations`
              : `${total} operations`}
          </p>
        </div>

        {visible.length === 0 ? (
          <EmptyState
            icon={<SearchIcon className="size-5" />}
            title="No operations match"
            description="Try a path segment such as “models” or a method such as “post”."
          />
        ) : (
          <div className="flex flex-col gap-10">
            {visible.map((g) => (
              <section
                key={g.tag}
                id={tagAnchor(g.tag)}
                aria-labelledby={`${tagAnchor(g.tag)}-title`}
                className="scroll-mt-6"
                data-testid="api-tag"
              >
                <div className="mb-3 flex items-baseline gap-2">
                  <h2 id={`${tagAnchor(g.tag)}-title`} className="text-lg font-semibold tracking-tight text-fg">
                    {g.tag}
                  </h2>
                  <Badge>{g.operations.length}</Badge>
                </div>
                {g.description ? (
                  <p className="-mt-1 mb-3 text-sm text-fg-muted">
                    <InlineMarkdown text={g.description} />
                  </p>
                ) : null}
                <div className="flex flex-col gap-2">
                  {g.operations.map((op) => (
                    <OperationCard key={op.id} operation={op} doc={doc} />
                  ))}
                </div>
              </section>
            ))}
          </div>
        )}
      </div>
    </div>
  );
}
