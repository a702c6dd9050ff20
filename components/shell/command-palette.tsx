'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useEffect, useMemo, useRef, useState } from 'react';
import { cx } from '@/components/ui/cx';
import { SearchIcon } from '@/components/ui/icons';
import { Spinner } from '@/components/ui/spinner';
import { apiFetch } from '@/lib/client/api/api-fetch';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import { entityJobsQuery } from '@/lib/client/queries/jobs';
import { modelKeys, projectsQuery } from '@/lib/client/queries/models';
import { filterCommands, type Command } from '@/lib/client/navigation/shortcuts';
import { useDebouncedValue } from '@/lib/client/hooks/use-debounced-value';
import type { SessionDto } from '@/lib/schemas/accounts';
import { modelListSchema } from '@/lib/schemas/models';
import { Modal } from './modal';

const PAGES = [
  { label: 'Models', href: '/models' },
  { label: 'Fine-tune', href: '/sft/new', detail: 'Launch an SFT job' },
  { label: 'Jobs', href: '/jobs', detail: 'Running, queued and past training jobs' },
  { label: 'Playground', href: '/playground', detail: 'Chat with a model' },
  { label: 'Evals', href: '/evals', detail: 'Eval sets and runs' },
  { label: 'API keys', href: '/settings/api-keys', detail: 'Settings' },
  { label: 'Teams', href: '/settings/teams', detail: 'Settings' },
  { label: 'Usage', href: '/settings/usage', detail: 'Settings' },
  { label: 'Profile', href: '/settings/profile', detail: 'Settings' },
  { label: 'Workers', href: '/workers', detail: 'Connected training workers' },
  { label: 'API docs', href: '/docs' },
];

const MODEL_RESULTS = 8;

interface CommandPaletteProps {
  open: boolean;
  onClose: () => void;
  session: SessionDto;
  entity: string;
}

/**
 * The quick switcher (Ctrl/⌘+K): pages, entities, the selected entity's projects, and models of every
 * entity the user can reach, found by name on the server as the user types.
 */
export function CommandPalette({ open, onClose, session, entity }: CommandPaletteProps) {
  return (
    <Modal open={open} onClose={onClose} labelledBy="command-palette-title" className="mt-[12vh] mb-auto max-w-xl">
      <PaletteBody onClose={onClose} session={session} entity={entity} />
    </Modal>
  );
}

function PaletteBody({ onClose, session, entity }: Omit<CommandPaletteProps, 'open'>) {
  const router = useRouter();
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const listRef = useRef<HTMLDivElement>(null);
  const search = useDebouncedValue(query.trim(), 150);
  const defaultEntity = session.default_entity;

  const projects = useQuery(projectsQuery(entity));
  // The jobs someone switches to are the ones running or waiting now; the Jobs page holds the rest.
  const activeJobs = useQuery(entityJobsQuery(entity, { kind: 'active' }));
  const models = useQuery({
    queryKey: [...modelKeys.all(), 'switcher', search],
    queryFn: ({ signal }) => {
      const params = new URLSearchParams({ limit: String(MODEL_RESULTS) });
      if (search) params.set('search', search);
      return apiFetch(`/v1/preview/models?${params}`, modelListSchema, { signal });
    },
    placeholderData: keepPreviousData,
  });

  const commands = useMemo(() => {
    const all: Command[] = [];
    for (const p of PAGES)
      all.push({
        id: `page:${p.href}`,
        group: 'Pages',
        label: p.label,
        detail: p.detail,
        href: hrefWithEntity(p.href, entity, defaultEntity),
      });
    for (const m of models.data?.data ?? []) {
      all.push({
        id: `model:${m.id}`,
        group: 'Models',
        label: m.name,
        detail: `${m.entity}/${m.project}`,
        href: hrefWithEntity(`/models/${m.id}`, m.entity, defaultEntity),
      });
    }
    for (const j of activeJobs.data?.data ?? []) {
      all.push({
        id: `job:${j.id}`,
        group: 'Jobs',
        label: `${j.type === 'rl' ? 'RL' : 'SFT'} job on ${j.model.name}`,
        detail: `${j.status === 'RUNNING' ? 'Running' : 'Queued'} · ${j.id.slice(0, 8)}`,
        href: hrefWithEntity(`/jobs/${j.id}`, entity, defaultEntity),
      });
    }
    for (const p of (projects.data?.data ?? []).filter((p) => p.entity === entity)) {
      all.push({
        id: `project:${p.id}`,
        group: 'Projects',
        label: p.name,
        detail: `${p.model_count} model${p.model_count === 1 ? '' : 's'} in ${p.entity}`,
        href: hrefWithEntity(`/models?project=${encodeURIComponent(p.name)}`, entity, defaultEntity),
      });
    }
    for (const e of session.entities) {
      all.push({
        id: `entity:${e.name}`,
        group: 'Entities',
        label: e.name,
        detail: e.kind === 'team' ? 'Team' : 'Personal',
        href: hrefWithEntity('/models', e.name, defaultEntity),
      });
    }
    return filterCommands(all, query);
  }, [entity, defaultEntity, models.data, projects.data, activeJobs.data, session.entities, query]);

  const current = Math.min(active, Math.max(commands.length - 1, 0));

  useEffect(() => {
    listRef.current?.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
  }, [current, commands]);

  function go(command: Command | undefined) {
    if (!command) return;
    onClose();
    router.push(command.href);
  }

  const groups: { name: string; items: { command: Command; index: number }[] }[] = [];
  commands.forEach((command, index) => {
    const last = groups.at(-1);
    if (last && last.name === command.group) last.items.push({ command, index });
    else groups.push({ name: command.group, items: [{ command, index }] });
  });

  return (
    <div data-testid="command-palette">
      <h2 id="command-palette-title" className="sr-only">
        Quick switcher
      </h2>
      <div className="flex items-center gap-2 border-b border-line px-4">
        <SearchIcon className="size-4 shrink-0 text-fg-subtle" />
        <input
          autoFocus
          role="combobox"
          aria-expanded="true"
          aria-controls="command-palette-list"
          aria-activedescendant={commands.length > 0 ? `command-${current}` : undefined}
          aria-autocomplete="list"
          aria-label="Search pages, entities, projects and models"
          placeholder="Jump to a page, entity, project or model…"
          value={query}
          onChange={(e) => {
            setQuery(e.target.value);
            setActive(0);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
              e.preventDefault();
              const n = commands.length;
              if (n > 0) setActive((current + (e.key === 'ArrowDown' ? 1 : n - 1)) % n);
            } else if (e.key === 'Enter') {
              e.preventDefault();
              go(commands[current]);
            }
          }}
          className="h-12 min-w-0 flex-1 bg-transparent text-[15px] text-fg placeholder:text-fg-subtle focus:outline-none"
          data-testid="command-palette-input"
        />
        {models.isFetching ? <Spinner className="size-4 text-fg-subtle" /> : null}
      </div>
      <div
        ref={listRef}
        id="command-palette-list"
        role="listbox"
        aria-label="Results"
        className="max-h-[50vh] overflow-y-auto p-2"
      >
        {groups.map((group) => (
          <div key={group.name} role="group" aria-labelledby={`command-group-${group.name}`} className="mb-1 last:mb-0">
            <div
              id={`command-group-${group.name}`}
              role="presentation"
              className="px-2.5 pt-2 pb-1 text-[11px] font-medium tracking-wider text-fg-subtle uppercase"
            >
              {group.name}
            </div>
            {group.items.map(({ command, index }) => (
              <div
                key={command.id}
                id={`command-${index}`}
                role="option"
                aria-selected={index === current}
                onMouseMove={() => setActive(index)}
                onClick={() => go(command)}
                data-testid="command-option"
                className={cx(
                  'flex cursor-pointer items-baseline justify-between gap-3 rounded-lg px-2.5 py-2 text-sm',
                  index === current ? 'bg-accent-soft text-fg' : 'text-fg-muted',
                )}
              >
                <span className="truncate font-medium text-fg">{command.label}</span>
                {command.detail ? (
                  <span className="shrink-0 truncate font-mono text-xs text-fg-subtle">{command.detail}</span>
                ) : null}
              </div>
            ))}
          </div>
        ))}
        {commands.length === 0 ? (
          <p className="px-3 py-8 text-center text-sm text-fg-muted" role="status">
            {models.isFetching ? 'Searching…' : `Nothing matches “${query.trim()}”.`}
          </p>
        ) : null}
      </div>
      <div className="flex items-center gap-4 border-t border-line px-4 py-2 text-xs text-fg-subtle">
        <span>↑ ↓ to move</span>
        <span>Enter to open</span>
        <span>Esc to close</span>
      </div>
    </div>
  );
}
