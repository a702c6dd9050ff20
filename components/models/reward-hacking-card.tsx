import { AlertTriangleIcon } from '@/components/ui/icons';
import { signalSplit, type HackingSignal } from '@/lib/client/runs/rl-guardrails';
import { formatNumber } from '@/lib/client/format/trajectory-view';

/** Shown above the charts when the reward looks gamed; links to the trajectories of the latest step of that split. */
export function RewardHackingCard({
  signals,
  onOpenTrajectories,
}: {
  signals: readonly HackingSignal[];
  /** Opens the trajectories at `step`, compared with `compareWith` (where the signal began). */
  onOpenTrajectories: (step: number, split: string, compareWith: number) => void;
}) {
  if (signals.length === 0) return null;
  return (
    // Not <Alert>: its faded body text falls under AA contrast on the warning tint; the body reads in the page's ink.
    <section
      aria-labelledby="reward-hacking-title"
      className="flex gap-3 rounded-lg border border-warning-text/25 bg-warning-soft px-3.5 py-3 text-sm"
      data-testid="reward-hacking-card"
    >
      <AlertTriangleIcon className="mt-0.5 size-4 shrink-0 text-warning-text" />
      <div className="min-w-0 flex-1 space-y-1">
        <h2 id="reward-hacking-title" className="font-medium text-warning-text">
          Possible reward hacking
        </h2>
        <ul className="list-disc space-y-1.5 pl-4 text-fg">
          {signals.map((s) => {
            const split = signalSplit(s);
            return (
              <li key={`${s.kind}-${s.kind === 'length-capped' ? s.split : s.metric}`}>
                {s.kind === 'length-capped' ? (
                  <span data-testid="hacking-length-capped">
                    {Math.round(s.shareTo * 100)} % of the {split} completions of the latest steps stopped at the token
                    limit (finish_reason &ldquo;length&rdquo;), against {Math.round(s.shareFrom * 100)} % at the start
                    {s.tokensFrom !== null && s.tokensTo !== null
                      ? `; their mean length went from ${formatNumber(s.tokensFrom)} to ${formatNumber(s.tokensTo)} tokens`
                      : ''}
                    : the policy may be earning its reward by filling max_tokens.
                  </span>
                ) : s.kind === 'metric-falls' ? (
                  <>
                    <span className="font-mono text-[13px]">{s.reward}</span> rose from {formatNumber(s.rewardFrom)} to{' '}
                    {formatNumber(s.rewardTo)} while <span className="font-mono text-[13px]">{s.metric}</span> fell from{' '}
                    {formatNumber(s.from)} to {formatNumber(s.to)}: the policy may be gaming the reward.
                  </>
                ) : (
                  <>
                    <span className="font-mono text-[13px]">{s.metric}</span> sits at its maximum (
                    {formatNumber(s.limit)}) in {Math.round(s.share * 100)} % of the recent steps: completions may be
                    running into the length limit.
                  </>
                )}{' '}
                <button
                  type="button"
                  className="font-medium underline underline-offset-2 hover:no-underline"
                  onClick={() => onOpenTrajectories(s.steps[1], split, s.steps[0])}
                  data-testid="hacking-trajectories"
                >
                  Compare the {split} trajectories of step {s.steps[0].toLocaleString('en')} and step{' '}
                  {s.steps[1].toLocaleString('en')}
                </button>
              </li>
            );
          })}
        </ul>
      </div>
    </section>
  );
}
