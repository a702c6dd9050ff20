'use client';

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Modal } from '@/components/shell/modal';
import { Button } from '@/components/ui/button';
import { CursorPager } from '@/components/ui/cursor-pager';
import { Skeleton } from '@/components/ui/skeleton';
import { currentCursor, FIRST_PAGE, type CursorStack } from '@/lib/client/navigation/cursor-stack';
import { evalExamplesQuery, useDeleteEvalSet } from '@/lib/client/queries/evals';
import { messageText, referenceText, type EvalSet } from '@/lib/client/evals/evals';
import { evalSetOptionLabel } from './eval-settings-fields';

/**
 * A set version's examples, a page at a time: each prompt's messages, its reference and metadata; and the way to
 * delete that version (its finished runs go with it; the server refuses while a run is queued or running).
 */
export default function ExamplesDialog({ set, onClose }: { set: EvalSet | null; onClose: () => void }) {
  return (
    <Modal open={set !== null} onClose={onClose} labelledBy="examples-title" className="max-w-3xl">
      {set ? <Examples key={set.id} set={set} onClose={onClose} /> : null}
    </Modal>
  );
}

function Examples({ set, onClose }: { set: EvalSet; onClose: () => void }) {
  const [cursors, setCursors] = useState<CursorStack>(FIRST_PAGE);
  const page = useQuery(evalExamplesQuery(set.id, currentCursor(cursors) ?? null));
  const [confirming, setConfirming] = useState(false);
  const remove = useDeleteEvalSet();
  return (
    <div className="flex max-h-[85vh] flex-col">
      <header className="flex items-start justify-between gap-3 border-b border-line px-5 py-4">
        <div className="min-w-0">
          <h2 id="examples-title" className="text-[15px] font-semibold text-fg">
            Examples
          </h2>
          <p className="mt-0.5 text-sm break-all text-fg-muted">{evalSetOptionLabel(set)}</p>
        </div>
        <Button variant="ghost" size="sm" onClick={onClose}>
          Close
        </Button>
      </header>
      <div className="min-h-0 flex-1 overflow-y-auto px-5 py-4" data-testid="eval-examples">
        {page.isPending ? (
          <Skeleton className="h-40 w-full" />
        ) : page.isError ? (
          <p role="alert" className="text-sm text-danger-text">
            Could not load the examples: {page.error.message}
          </p>
        ) : (
          <ol className="flex flex-col gap-3">
            {page.data.data.map((ex) => (
              <li key={ex.index} className="rounded-lg border border-line p-3" data-testid="eval-example">
                <p className="mb-2 text-xs font-medium text-fg-subtle">#{ex.index + 1}</p>
                <dl className="grid gap-x-3 gap-y-1.5 text-sm sm:grid-cols-[6rem_minmax(0,1fr)]">
                  {ex.messages.map((m, i) => (
                    <div key={i} className="contents">
                      <dt className="font-mono text-xs text-fg-subtle sm:pt-0.5">{m.role}</dt>
                      <dd className="whitespace-pre-wrap wrap-anywhere text-fg">{messageText(m.content)}</dd>
                    </div>
                  ))}
                  <dt className="font-mono text-xs text-fg-subtle sm:pt-0.5">reference</dt>
                  <dd className="font-mono text-xs whitespace-pre-wrap wrap-anywhere text-fg sm:pt-0.5">
                    {referenceText(ex.reference) ?? <span className="text-fg-subtle">none</span>}
                  </dd>
                  {ex.metadata && Object.keys(ex.metadata).length > 0 ? (
                    <>
                      <dt className="font-mono text-xs text-fg-subtle sm:pt-0.5">metadata</dt>
                      <dd className="font-mono text-xs wrap-anywhere text-fg-muted sm:pt-0.5">
                        {JSON.stringify(ex.metadata)}
                      </dd>
                    </>
                  ) : null}
                </dl>
              </li>
            ))}
          </ol>
        )}
      </div>
      <CursorPager
        cursors={cursors}
        setCursors={setCursors}
        nextCursor={page.data?.next ?? null}
        testId="eval-examples"
      />
      <footer className="border-t border-line px-5 py-3" data-testid="eval-set-delete-area">
        {confirming ? (
          <div className="flex flex-col gap-2 sm:flex-row sm:items-center sm:justify-between">
            <p className="text-sm text-fg">
              Delete v{set.version} of {set.name} and its finished eval runs? This cannot be undone.
            </p>
            <div className="flex shrink-0 gap-2">
              <Button variant="secondary" size="sm" onClick={() => setConfirming(false)} disabled={remove.isPending}>
                Keep it
              </Button>
              <Button
                variant="danger"
                size="sm"
                disabled={remove.isPending}
                data-testid="eval-set-delete-confirm"
                onClick={() => remove.mutate(set.id, { onSuccess: onClose })}
              >
                {remove.isPending ? 'Deleting…' : `Delete v${set.version}`}
              </Button>
            </div>
          </div>
        ) : (
          <Button variant="danger-ghost" size="sm" onClick={() => setConfirming(true)} data-testid="eval-set-delete">
            Delete this version
          </Button>
        )}
        {remove.error ? (
          <p role="alert" className="mt-2 text-sm text-danger-text" data-testid="eval-set-delete-error">
            {remove.error.message}
          </p>
        ) : null}
      </footer>
    </div>
  );
}
