'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { buttonClassName } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { allCheckpointsQuery } from '@/lib/client/queries/checkpoints';
import { formatNumber } from '@/lib/client/format/trajectory-view';
import type { ModelSummaryDto } from '@/lib/schemas/models';

/** A training-curve flag's checkpoint, once chosen: what made it, its metrics, and what to do with it. */
export function SelectedCheckpoint({
  model,
  step,
  origin,
  playgroundHref,
  fineTuneHref,
  onClose,
}: {
  model: ModelSummaryDto;
  step: number;
  /** What made the checkpoint: its job, or its sampler save. */
  origin: ReactNode;
  playgroundHref: string;
  fineTuneHref: string;
  onClose: () => void;
}) {
  const all = useQuery(allCheckpointsQuery(model.id));
  const checkpoint = all.data?.data.find((c) => c.step === step);
  // Held-out and logged figures first: they say how good the checkpoint is; train/* says how training went.
  const metrics = Object.entries(checkpoint?.metrics ?? {})
    .filter(([, v]) => typeof v === 'number')
    .sort(([a], [b]) => Number(a.startsWith('train/')) - Number(b.startsWith('train/')) || a.localeCompare(b))
    .slice(0, 8);
  return (
    <Card className="px-4 py-3" data-testid="curve-checkpoint" aria-live="polite">
      <div className="flex flex-wrap items-baseline justify-between gap-x-4 gap-y-2">
        <p className="text-sm text-fg">
          <span className="font-semibold">Step {step}</span> <span className="text-fg-muted">{origin}</span>
          {checkpoint === undefined && all.isSuccess ? (
            <span className="text-fg-muted"> · this checkpoint was deleted</span>
          ) : null}
        </p>
        <div className="flex flex-wrap items-center gap-2">
          {checkpoint ? (
            <>
              <Link href={playgroundHref} className={buttonClassName({ variant: 'secondary', size: 'sm' })}>
                Open in the playground
              </Link>
              <Link href={fineTuneHref} className={buttonClassName({ variant: 'secondary', size: 'sm' })}>
                Fine-tune from step {step}
              </Link>
            </>
          ) : null}
          <button type="button" className="text-xs font-medium text-accent-text hover:underline" onClick={onClose}>
            Close
          </button>
        </div>
      </div>
      {metrics.length > 0 ? (
        <dl className="mt-2 flex flex-wrap gap-x-5 gap-y-1 text-xs">
          {metrics.map(([name, value]) => (
            <div key={name} className="flex gap-1.5">
              <dt className="font-mono text-fg-muted">{name}</dt>
              <dd className="text-fg tabular-nums">{formatNumber(value)}</dd>
            </div>
          ))}
        </dl>
      ) : null}
    </Card>
  );
}
