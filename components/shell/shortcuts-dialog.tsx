'use client';

import { SHORTCUT_GROUPS } from '@/lib/client/navigation/shortcuts';
import { Modal } from './modal';

export function Kbd({ children }: { children: string }) {
  return (
    <kbd className="inline-flex min-w-6 items-center justify-center rounded-md border border-line-strong bg-surface px-1.5 py-0.5 font-sans text-[11px] font-medium text-fg-muted shadow-xs">
      {children}
    </kbd>
  );
}

/** Every keyboard shortcut, from the same table the key handler reads (lib/client/navigation/shortcuts.ts). */
export function ShortcutsDialog({ open, onClose, modLabel }: { open: boolean; onClose: () => void; modLabel: string }) {
  return (
    <Modal open={open} onClose={onClose} labelledBy="shortcuts-title" className="max-w-lg">
      <div data-testid="shortcuts-dialog">
        <div className="flex items-center justify-between border-b border-line px-5 py-3.5">
          <h2 id="shortcuts-title" className="text-base font-semibold">
            Keyboard shortcuts
          </h2>
          <button
            type="button"
            onClick={onClose}
            className="rounded-md px-2 py-1 text-sm text-fg-muted hover:bg-surface-muted hover:text-fg"
          >
            Close
          </button>
        </div>
        <div className="grid gap-5 px-5 py-4 sm:grid-cols-2">
          {SHORTCUT_GROUPS.map((group) => (
            <section key={group.title} aria-labelledby={`shortcuts-${group.title}`}>
              <h3
                id={`shortcuts-${group.title}`}
                className="mb-2 text-xs font-medium tracking-wide text-fg-subtle uppercase"
              >
                {group.title}
              </h3>
              <dl className="space-y-1.5 text-sm">
                {group.shortcuts.map((s) => (
                  <div key={s.description} className="flex items-center justify-between gap-3">
                    <dt className="text-fg-muted">{s.description}</dt>
                    <dd className="flex shrink-0 items-center gap-1">
                      {s.keys.map((k, i) => (
                        <span key={i} className="flex items-center gap-1">
                          {i > 0 && s.sequence ? <span className="text-xs text-fg-subtle">then</span> : null}
                          <Kbd>{k === 'Mod' ? modLabel : k}</Kbd>
                        </span>
                      ))}
                    </dd>
                  </div>
                ))}
              </dl>
            </section>
          ))}
        </div>
      </div>
    </Modal>
  );
}
