'use client';

import { useInfiniteQuery } from '@tanstack/react-query';
import { Fragment, useEffect, useMemo, useRef, useState } from 'react';
import { Button } from '@/components/ui/button';
import { Card, CardHeader } from '@/components/ui/card';
import { cx } from '@/components/ui/cx';
import { Select } from '@/components/ui/input';
import { Skeleton } from '@/components/ui/skeleton';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import { trajectoriesInfiniteQuery } from '@/lib/client/queries/trajectories';
import {
  comparePrompts,
  formatNumber,
  groupTrajectories,
  type DisplayTrajectory,
  type PromptComparison,
} from '@/lib/client/format/trajectory-view';
import { TrajectoryCard } from './trajectory-card';

/** Rows shown before "Show all": the prompts whose reward moved most come first, so these are the telling ones. */
const FIRST_ROWS = 10;

function signed(v: number, digits: (x: number) => string): string {
  return `${v > 0 ? '+' : v < 0 ? '−' : '±'}${digits(Math.abs(v))}`;
}

/**
 * The same prompts at two steps, side by side: for each prompt rolled out at both (in the groups loaded on each
 * side), the mean reward and answer length at either step and how they moved, the biggest moves first; a row opens
 * the best rollout of each step next to each other. What a reward curve cannot show: which prompts got better, and
 * whether the answers only got longer.
 */
export function StepCompare({
  modelId,
  step,
  split,
  steps,
  trajectories,
  compareWith,
  onCompareWithChange,
}: {
  modelId: string;
  step: number;
  split: string;
  /** Steps that hold trajectories, newest first. */
  steps: readonly number[];
  /** The trajectories loaded at `step`. */
  trajectories: readonly DisplayTrajectory[];
  /** The step to compare with (kept in the URL by the page); null = the step before this one. */
  compareWith: number | null;
  onCompareWithChange: (step: number) => void;
}) {
  const others = steps.filter((s) => s !== step);
  // The step before this one by default: "what changed since the last step".
  const other =
    compareWith !== null && others.includes(compareWith) ? compareWith : (others.find((s) => s < step) ?? others[0]);
  // Opened on a comparison (the reward-hacking card's link names where the rise began): that is what the person came
  // to read, further down the tab than the first screen.
  const card = useRef<HTMLElement>(null);
  const named = useRef(compareWith !== null);
  useEffect(() => {
    if (named.current && other !== undefined) card.current?.scrollIntoView({ block: 'start' });
    named.current = false;
  }, [other]);
  const [open, setOpen] = useState<string | null>(null);
  const [showAll, setShowAll] = useState(false);
  const groups = useInfiniteQuery({
    ...trajectoriesInfiniteQuery(modelId, { step: other ?? null, split }),
    enabled: other !== undefined,
  });
  const atOther = useMemo(
    () => groups.data?.pages.flatMap((p) => p.data.flatMap((g) => groupTrajectories(g.group))) ?? [],
    [groups.data],
  );
  // Earlier step on the left, whichever was picked first.
  const otherFirst = other !== undefined && other < step;
  const [left, right] = otherFirst ? [other, step] : [step, other];
  const rows = useMemo(
    () => (otherFirst ? comparePrompts(atOther, trajectories) : comparePrompts(trajectories, atOther)),
    [atOther, trajectories, otherFirst],
  );
  if (other === undefined) return null;
  const shown = showAll ? rows : rows.slice(0, FIRST_ROWS);

  return (
    <Card ref={card} aria-labelledby="step-compare-title" data-testid="step-compare">
      <CardHeader
        id="step-compare-title"
        title="Same prompts at two steps"
        description="Prompts rolled out at both steps, the mean reward and answer length (characters) of their rollouts at each, biggest reward change first. Open a row to read the best rollout of each step side by side."
        actions={
          <div className="flex items-center gap-2 text-sm">
            <label htmlFor="compare-step" className="text-fg-muted">
              Step {step} with step
            </label>
            <Select
              id="compare-step"
              value={String(other)}
              onChange={(e) => {
                onCompareWithChange(Number(e.target.value));
                setOpen(null);
              }}
              className="w-24"
              data-testid="compare-step"
            >
              {others.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </Select>
          </div>
        }
      />
      {groups.isPending ? (
        <div className="p-4">
          <Skeleton className="h-24 w-full" />
        </div>
      ) : groups.isError ? (
        <p role="alert" className="px-5 py-4 text-sm text-danger-text">
          Could not load step {other}: {groups.error.message}
        </p>
      ) : rows.length === 0 ? (
        <p className="px-5 py-4 text-sm text-fg-muted" data-testid="step-compare-empty">
          No prompt was rolled out at both step {left} and step {right}
          {split ? ` in ${split}` : ''}.
        </p>
      ) : (
        <>
          <Table stacked>
            <caption className="sr-only">
              Prompts at step {left} and step {right}
            </caption>
            <thead>
              <tr>
                <Th>Prompt</Th>
                <Th className="text-right">Reward {left}</Th>
                <Th className="text-right">Reward {right}</Th>
                <Th className="text-right">Change</Th>
                <Th className="text-right">Length</Th>
                <Th className="text-right">
                  <span className="sr-only">Open</span>
                </Th>
              </tr>
            </thead>
            <tbody>
              {shown.map((row) => (
                <Fragment key={row.key}>
                  <Tr data-testid="step-compare-row">
                    {/* max-w-0 lets the column take the room the numbers leave, truncated; on a phone the row is a
                        card, where a zero-width cell would hide the prompt, so there the text is cut at the card. */}
                    <Td label="Prompt" className="w-full max-w-0 text-fg max-sm:max-w-none" title={row.key}>
                      <div className="truncate" data-testid="step-compare-prompt">
                        {row.preview || '(no prompt text)'}
                      </div>
                    </Td>
                    <Td label={`Reward ${left}`} className="text-right tabular-nums">
                      {formatNumber(row.a.meanReward)}
                      <span className="ml-1 text-xs text-fg-subtle">×{row.a.count}</span>
                    </Td>
                    <Td label={`Reward ${right}`} className="text-right tabular-nums">
                      {formatNumber(row.b.meanReward)}
                      <span className="ml-1 text-xs text-fg-subtle">×{row.b.count}</span>
                    </Td>
                    <Td
                      label="Change"
                      className={cx(
                        'text-right font-medium tabular-nums',
                        row.rewardDelta > 0 ? 'text-success-text' : row.rewardDelta < 0 ? 'text-danger-text' : '',
                      )}
                      data-testid="reward-delta"
                    >
                      {signed(row.rewardDelta, formatNumber)}
                    </Td>
                    <Td label="Length change" className="text-right whitespace-nowrap text-fg-muted tabular-nums">
                      {signed(row.lengthDelta, (x) => Math.round(x).toLocaleString('en'))}
                    </Td>
                    <Td className="text-right">
                      <Button
                        variant="ghost"
                        size="sm"
                        aria-expanded={open === row.key}
                        onClick={() => setOpen(open === row.key ? null : row.key)}
                      >
                        {open === row.key ? 'Close' : 'Side by side'}
                      </Button>
                    </Td>
                  </Tr>
                  {open === row.key ? <SideBySide row={row} left={left} right={right!} /> : null}
                </Fragment>
              ))}
            </tbody>
          </Table>
          {rows.length > FIRST_ROWS ? (
            <div className="border-t border-line px-5 py-2.5">
              <Button variant="ghost" size="sm" onClick={() => setShowAll(!showAll)}>
                {showAll ? `Show the first ${FIRST_ROWS}` : `Show all ${rows.length} prompts`}
              </Button>
            </div>
          ) : null}
        </>
      )}
    </Card>
  );
}

function SideBySide({ row, left, right }: { row: PromptComparison<DisplayTrajectory>; left: number; right: number }) {
  return (
    <tr>
      <td colSpan={6} className="bg-surface-muted/40 px-4 py-3">
        <div className="grid gap-3 lg:grid-cols-2" data-testid="step-compare-pair">
          <TrajectoryCard trajectory={row.a.sample} label={`Step ${left} · best of ${row.a.count}`} />
          <TrajectoryCard trajectory={row.b.sample} label={`Step ${right} · best of ${row.b.count}`} />
        </div>
      </td>
    </tr>
  );
}
