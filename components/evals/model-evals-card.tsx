'use client';

import { useQuery } from '@tanstack/react-query';
import dynamic from 'next/dynamic';
import Link from 'next/link';
import { useState } from 'react';
import { Button, buttonClassName } from '@/components/ui/button';
import { Card, CardBody, CardHeader } from '@/components/ui/card';
import { Skeleton } from '@/components/ui/skeleton';
import { autoEvalQuery, evalRunsQuery, evalSetsQuery, useSetAutoEval } from '@/lib/client/queries/evals';
import { formatScore, scorerNames, targetLabel } from '@/lib/client/evals/evals';
import { stepName } from '@/lib/client/chat/inference-names';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import { EvalStatusBadge } from './eval-status';
import { evalSetOptionLabel } from './eval-settings-fields';

const AutoEvalForm = dynamic(() => import('./auto-eval-form'), {
  ssr: false,
  loading: () => <Skeleton className="h-48 w-full" />,
});

const RECENT_RUNS = 5;

/**
 * The model page's Evals card: its latest eval runs, links to all of them and to a new run on its checkpoints, and
 * its auto-eval setting (seen, changed, switched off). Loaded after hydration, like the page's other lower sections.
 */
export function ModelEvalsCard({ model }: { model: ModelSummaryDto }) {
  const runs = useQuery(evalRunsQuery({ model_id: model.id }));
  const autoEval = useQuery(autoEvalQuery(model.id));
  const sets = useQuery({ ...evalSetsQuery(), enabled: Boolean(autoEval.data?.auto_eval) });
  const [editing, setEditing] = useState(false);
  const switchOff = useSetAutoEval(model.id);
  const setting = autoEval.data?.auto_eval ?? null;
  const set = setting ? sets.data?.data.find((s) => s.id === setting.eval_set_id) : undefined;
  const newRunHref =
    model.latest_step !== null
      ? `/evals/new?target=${encodeURIComponent(stepName(model, model.latest_step))}`
      : '/evals/new';

  return (
    <Card aria-labelledby="model-evals-title" data-testid="model-evals">
      <CardHeader
        id="model-evals-title"
        title="Evals"
        description="Scores of this model's checkpoints on eval sets; each run's means chart beside the training metrics."
        actions={
          <>
            <Link
              href={`/evals?model_id=${encodeURIComponent(model.id)}`}
              className={buttonClassName({ variant: 'ghost', size: 'sm' })}
              data-testid="model-evals-all"
            >
              All runs
            </Link>
            <Link href={newRunHref} className={buttonClassName({ variant: 'secondary', size: 'sm' })}>
              Evaluate
            </Link>
          </>
        }
      />
      <CardBody className="flex flex-col gap-4">
        {runs.isPending ? (
          <Skeleton className="h-12 w-full" />
        ) : runs.isError ? (
          <p className="text-sm text-danger-text" role="alert">
            Could not load the eval runs: {runs.error.message}
          </p>
        ) : runs.data.data.length === 0 ? (
          <p className="text-sm text-fg-muted">No eval run has scored this model yet.</p>
        ) : (
          <ul className="flex flex-col divide-y divide-line" aria-label="Latest eval runs">
            {runs.data.data.slice(0, RECENT_RUNS).map((run) => {
              const scorer = scorerNames(run)[0];
              const mine = run.targets.filter((t) => t.model_id === model.id);
              return (
                <li key={run.id} className="flex flex-wrap items-center justify-between gap-2 py-2 first:pt-0">
                  <span className="flex min-w-0 items-center gap-2">
                    <Link
                      href={`/evals/runs/${encodeURIComponent(run.id)}`}
                      className="truncate text-sm font-medium text-fg hover:text-accent-text hover:underline"
                    >
                      {run.name || (run.eval_set ? `${run.eval_set.name} v${run.eval_set.version}` : 'Eval run')}
                    </Link>
                    <EvalStatusBadge status={run.status} />
                  </span>
                  {scorer ? (
                    <span className="text-xs text-fg-muted tabular-nums">
                      <span className="font-mono text-fg-subtle">{scorer}</span>{' '}
                      {mine
                        .map(
                          (t) =>
                            `${targetLabel(t.name).replace(/^.* · /, '')} ${formatScore(run.summary.find((r) => r.target === t.name && r.scorer === scorer)?.mean)}`,
                        )
                        .join(' · ')}
                    </span>
                  ) : null}
                </li>
              );
            })}
          </ul>
        )}
        <div className="rounded-lg border border-line bg-surface-muted/40 p-3" data-testid="auto-eval">
          <h3 className="text-sm font-semibold text-fg">Evaluate every new checkpoint</h3>
          {editing ? (
            <div className="mt-3">
              <AutoEvalForm modelId={model.id} current={setting} onDone={() => setEditing(false)} />
            </div>
          ) : autoEval.isPending ? (
            <Skeleton className="mt-2 h-5 w-64" />
          ) : autoEval.isError ? (
            <p className="mt-1 text-sm text-danger-text" role="alert">
              Could not load the setting: {autoEval.error.message}
            </p>
          ) : (
            <div className="mt-1 flex flex-wrap items-center justify-between gap-2">
              <p className="text-sm text-fg-muted" data-testid="auto-eval-state">
                {setting ? (
                  <>
                    On: each new checkpoint is scored on{' '}
                    <span className="font-medium text-fg">{set ? evalSetOptionLabel(set) : 'its eval set'}</span> with{' '}
                    {setting.scorers.map((s) => s.name ?? s.type).join(', ')}.
                  </>
                ) : (
                  'Off. Set an eval set here (or in the fine-tune form) to score each new checkpoint as it is saved.'
                )}
              </p>
              <span className="flex gap-2">
                {setting ? (
                  <Button
                    variant="ghost"
                    size="sm"
                    pending={switchOff.isPending}
                    onClick={() => switchOff.mutate(null)}
                    data-testid="auto-eval-off"
                  >
                    Switch off
                  </Button>
                ) : null}
                <Button variant="secondary" size="sm" onClick={() => setEditing(true)} data-testid="auto-eval-edit">
                  {setting ? 'Change' : 'Set up'}
                </Button>
              </span>
              {switchOff.isError ? (
                <p role="alert" className="w-full text-xs text-danger-text">
                  {switchOff.error.message}
                </p>
              ) : null}
            </div>
          )}
        </div>
      </CardBody>
    </Card>
  );
}
