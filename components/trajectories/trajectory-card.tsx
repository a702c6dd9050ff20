import { Badge } from '@/components/ui/badge';
import { cx } from '@/components/ui/cx';
import {
  formatNumber,
  rewardFraction,
  trajectoryPreview,
  type DisplayTrajectory,
} from '@/lib/client/format/trajectory-view';
import { MessageView } from './message-view';

interface TrajectoryCardProps {
  trajectory: DisplayTrajectory;
  label: string;
  tone?: 'best' | 'worst';
  /** Collapsed cards show the reward line only; a list of dozens stays scannable. */
  collapsible?: boolean;
  /** The rewards on screen, lowest and highest: the row's reward bar is drawn between them. */
  rewardRange?: { min: number; max: number };
}

function Body({ trajectory }: { trajectory: DisplayTrajectory }) {
  const metrics = Object.entries(trajectory.metrics);
  return (
    <div className="space-y-2 px-3 pb-3">
      {trajectory.tools.length > 0 ? (
        <p className="text-xs text-fg-muted">
          Tools: <span className="font-mono">{trajectory.tools.join(', ')}</span>
        </p>
      ) : null}
      {metrics.length > 0 ? (
        <dl className="flex flex-wrap gap-x-3 gap-y-1 text-xs">
          {metrics.map(([k, v]) => (
            <div key={k} className="flex gap-1">
              <dt className="text-fg-subtle">{k}</dt>
              <dd className="font-mono text-fg">{v}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {trajectory.messages.length === 0 ? (
        <p className="text-xs text-fg-subtle">No messages.</p>
      ) : (
        <ol className="space-y-1.5">
          {trajectory.messages.map((m, i) => (
            <MessageView key={i} message={m} />
          ))}
        </ol>
      )}
    </div>
  );
}

export function TrajectoryCard({ trajectory, label, tone, collapsible = false, rewardRange }: TrajectoryCardProps) {
  const preview = collapsible ? trajectoryPreview(trajectory) : '';
  const header = (
    <span className="flex items-center gap-2 px-3 py-2 text-sm">
      <span className="shrink-0 font-medium text-fg">{label}</span>
      {tone ? <Badge tone={tone === 'best' ? 'success' : 'danger'}>{tone}</Badge> : null}
      {collapsible ? (
        <span className="min-w-0 flex-1 truncate text-xs text-fg-muted" data-testid="trajectory-preview">
          {preview || 'No text'}
        </span>
      ) : (
        <span className="flex-1" />
      )}
      {rewardRange ? (
        // Decorative: the number beside it is what a screen reader reads.
        <span aria-hidden="true" className="hidden h-1.5 w-16 shrink-0 overflow-hidden rounded-full bg-line sm:block">
          <span
            className="block h-full rounded-full bg-accent"
            data-testid="trajectory-reward-bar"
            style={{
              width: `${Math.round(rewardFraction(trajectory.reward, rewardRange.min, rewardRange.max) * 100)}%`,
            }}
          />
        </span>
      ) : null}
      <span
        className="min-w-[6.5rem] shrink-0 text-right font-mono text-xs text-fg-muted tabular-nums"
        data-testid="trajectory-reward"
      >
        reward {formatNumber(trajectory.reward)}
      </span>
    </span>
  );
  const box = cx(
    'overflow-hidden rounded-lg border bg-surface-muted/40',
    tone === 'best' ? 'border-success-text/30' : tone === 'worst' ? 'border-danger-text/30' : 'border-line',
  );
  if (collapsible) {
    return (
      <details className={box} data-testid="trajectory">
        <summary className="cursor-pointer list-none hover:bg-surface-muted [&::-webkit-details-marker]:hidden">
          {header}
        </summary>
        <Body trajectory={trajectory} />
      </details>
    );
  }
  return (
    <div className={box} data-testid={tone ? `trajectory-${tone}` : 'trajectory'}>
      {header}
      <Body trajectory={trajectory} />
    </div>
  );
}
