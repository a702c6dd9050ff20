'use client';

import { useMemo, useState, type ReactNode } from 'react';
import { Button } from '@/components/ui/button';
import { Card, CardFooter, CardHeader } from '@/components/ui/card';
import { BreakableText } from '@/components/ui/breakable-text';
import { RelativeTime } from '@/components/ui/relative-time';
import { clientStatusView, isLiveClient } from '@/lib/client/tinker/tinker-clients';
import { isOpen, loraParts, openRequestsText, sortRequests, sortSavedWeights } from '@/lib/client/tinker/tinker-format';
import type { ModelTinkerDto } from '@/lib/schemas/tinker-clients';
import { TinkerClientStatus, TinkerError } from './client-status';
import { TinkerRequestsTable } from './tinker-requests-table';
import { TinkerSavedWeightsTable } from './tinker-saved-weights-table';

/** Enough rows to see what is open and what just ran; the rest of the latest 50 behind "Show all". */
const REQUESTS_SHOWN = 10;

function Fact({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs font-medium text-fg-muted">{label}</dt>
      <dd className="mt-0.5 text-sm text-fg" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

/**
 * The model page's card for a model that is a Tinker training client (docs/tinker.md): its state on the worker, its
 * latest requests (open ones first, failures tinted with their errors), and its saved weights with their tinker://
 * paths. The page keeps it live through useModelLive.
 */
export function TinkerClientCard({
  tinker,
  checkpointHref,
  playgroundHref,
}: {
  tinker: ModelTinkerDto;
  checkpointHref: (step: number) => string;
  playgroundHref: (step: number) => string;
}) {
  const c = tinker.training_client;
  const [showAll, setShowAll] = useState(false);
  const requests = useMemo(() => sortRequests(tinker.requests), [tinker.requests]);
  const saved = useMemo(() => sortSavedWeights(tinker.saved), [tinker.saved]);
  const failed = requests.filter((r) => r.status === 'failed').length;
  // Open and failed requests are never hidden behind "Show all": they are what a person comes to this table for.
  const shown = showAll
    ? requests
    : requests.filter((r, i) => i < REQUESTS_SHOWN || isOpen(r) || r.status === 'failed');
  const parts = loraParts(c.lora);
  const view = clientStatusView(c);
  const open = openRequestsText(c);

  return (
    <Card aria-labelledby="tinker-client-title" data-testid="tinker-client-card">
      <CardHeader
        id="tinker-client-title"
        title="Tinker training client"
        description={
          isLiveClient(c)
            ? 'Trained call by call through the Tinker SDK: each optim step is a point of the training curve, each sampler save a checkpoint. Follows the worker live.'
            : 'Trained call by call through the Tinker SDK: each optim step is a point of the training curve, each sampler save a checkpoint.'
        }
      />
      <dl className="grid grid-cols-2 gap-x-6 gap-y-4 px-5 py-4 md:grid-cols-4">
        <div className="col-span-2 min-w-0 md:col-span-1">
          <dt className="text-xs font-medium text-fg-muted">Status</dt>
          <dd className="mt-1">
            <TinkerClientStatus client={c} brief />
          </dd>
        </div>
        <Fact label="LoRA" testId="tinker-client-lora">
          rank {c.lora.rank} · α {c.lora.alpha}
          <span className="block text-xs text-fg-muted">
            {parts.length > 0 ? `trains ${parts.join(', ')}` : 'trains no part'}
          </span>
        </Fact>
        <Fact label="Optim steps" testId="tinker-client-steps">
          <span className="tabular-nums">{c.optim_steps.toLocaleString('en')}</span>
        </Fact>
        <Fact label="Open requests" testId="tinker-client-open">
          {open ?? <span className="text-fg-muted">none</span>}
        </Fact>
        <Fact label="SDK version">
          <span className="font-mono text-xs">{c.sdk_version ?? '—'}</span>
        </Fact>
        <Fact label="Created">
          <RelativeTime iso={c.created_at} />
        </Fact>
        <Fact label={c.ended_at ? 'Ended' : 'Last request'}>
          <RelativeTime iso={c.ended_at ?? c.last_request_at} />
        </Fact>
      </dl>
      {c.status === 'failed' ? (
        // Not <Alert>: its faded body text falls under AA contrast on the tint; the message reads in the page's ink.
        <div
          className="mx-5 mb-4 rounded-lg border border-danger-text/25 bg-danger-soft px-3.5 py-3"
          data-testid="tinker-client-failure"
        >
          <TinkerError message={c.error ?? 'unknown error'} category={c.error_category} className="text-sm" />
        </div>
      ) : view.note ? (
        <p className="mx-5 mb-4 text-sm text-fg-muted" data-testid="tinker-client-note">
          {c.status === 'closed' ? 'Closed: ' : 'Waiting: '}
          <BreakableText text={view.note} />
        </p>
      ) : null}

      <section aria-labelledby="tinker-requests-title" className="border-t border-line">
        <div className="px-5 pt-4 pb-3">
          <h3 id="tinker-requests-title" className="text-sm font-semibold text-fg">
            Recent requests
          </h3>
          <p className="mt-0.5 text-xs text-fg-muted">
            {requests.length === 1 ? 'The latest request' : `The latest ${requests.length} requests`} (futures), open
            ones first
            {failed > 0 ? `; ${failed} failed, tinted, with the error the SDK raised` : ''}.
          </p>
        </div>
        {requests.length === 0 ? (
          <p className="px-5 pb-4 text-sm text-fg-muted">No request yet.</p>
        ) : (
          <TinkerRequestsTable requests={shown} />
        )}
        {requests.length > shown.length || showAll ? (
          <CardFooter className="justify-center">
            <Button
              variant="secondary"
              size="sm"
              onClick={() => setShowAll((v) => !v)}
              aria-expanded={showAll}
              data-testid="tinker-requests-toggle"
            >
              {showAll ? 'Show fewer' : `Show all ${requests.length}`}
            </Button>
          </CardFooter>
        ) : null}
      </section>

      <section aria-labelledby="tinker-saved-title" className="border-t border-line">
        <div className="px-5 pt-4 pb-3">
          <h3 id="tinker-saved-title" className="text-sm font-semibold text-fg">
            Saved weights
          </h3>
          <p className="mt-0.5 text-xs text-fg-muted">
            Sampler weights (save_weights_for_sampler) are checkpoints of this model; training states (save_state)
            resume training with create_training_client_from_state.
          </p>
        </div>
        {saved.length === 0 ? (
          <p className="px-5 pb-4 text-sm text-fg-muted" data-testid="tinker-saved-none">
            Nothing saved yet: save_state keeps a state to resume from; without one, a worker that dies takes the
            training client&apos;s progress with it.
          </p>
        ) : (
          <TinkerSavedWeightsTable saved={saved} checkpointHref={checkpointHref} playgroundHref={playgroundHref} />
        )}
      </section>
    </Card>
  );
}
