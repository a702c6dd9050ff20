import { Button } from '@/components/ui/button';
import { cx } from '@/components/ui/cx';
import { formatNumber } from '@/lib/client/format/trajectory-view';
import type { TrajectoryStepDto } from '@/lib/schemas/trajectories';

interface StepListProps {
  steps: TrajectoryStepDto[];
  selected: number | null;
  /** The split filter ('' = all): each step shows that split's mean, or one mean per split, never a mix. */
  split: string;
  onSelect: (step: number) => void;
  hasMore: boolean;
  loadingMore: boolean;
  onLoadMore: () => void;
}

/**
 * The steps that hold trajectories, newest first: people browse a run without knowing its step numbers,
 * and the mean reward beside each step shows where to look.
 */
export function StepList({ steps, selected, split, onSelect, hasMore, loadingMore, onLoadMore }: StepListProps) {
  return (
    <nav
      aria-label="Steps with trajectories"
      className="rounded-xl border border-line bg-surface"
      data-testid="trajectory-steps"
    >
      <h2 className="border-b border-line px-4 py-2.5 text-xs font-medium tracking-wide text-fg-subtle uppercase">
        Steps
      </h2>
      <ul className="max-h-[32rem] overflow-y-auto p-1.5">
        {steps.map((s) => {
          const current = s.step === selected;
          return (
            <li key={s.step}>
              <button
                type="button"
                onClick={() => onSelect(s.step)}
                aria-current={current ? 'true' : undefined}
                data-testid="trajectory-step-item"
                data-step={s.step}
                className={cx(
                  'flex w-full flex-col gap-0.5 rounded-lg px-2.5 py-2 text-left text-sm transition-colors',
                  current
                    ? 'bg-accent-soft text-fg ring-1 ring-accent/25 ring-inset'
                    : 'text-fg-muted hover:bg-surface-muted hover:text-fg',
                )}
              >
                <span className="font-medium text-fg">Step {s.step.toLocaleString('en')}</span>
                <span className="flex flex-col text-xs" data-testid="step-split-means">
                  {s.splits
                    .filter((sp) => !split || sp.split === split)
                    .map((sp) => (
                      <span key={sp.split} className="flex justify-between gap-2">
                        <span className="text-fg-subtle">
                          {sp.split} · {sp.groups} group{sp.groups === 1 ? '' : 's'}
                        </span>
                        <span className="font-mono tabular-nums" title={`Mean ${sp.split} reward`}>
                          {sp.reward_mean === null ? '—' : formatNumber(Number(sp.reward_mean.toFixed(4)))}
                        </span>
                      </span>
                    ))}
                </span>
              </button>
            </li>
          );
        })}
      </ul>
      {hasMore ? (
        <div className="border-t border-line p-2">
          <Button
            variant="ghost"
            size="sm"
            className="w-full"
            onClick={onLoadMore}
            pending={loadingMore}
            data-testid="trajectory-steps-more"
          >
            Older steps
          </Button>
        </div>
      ) : null}
    </nav>
  );
}
