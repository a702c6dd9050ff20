'use client';

import { useId, type ReactNode } from 'react';
import { cx } from '@/components/ui/cx';
import { MAX_SMOOTHING } from '@/lib/client/charts/ema-smoothing';

interface ChartControlsProps {
  smoothing: number;
  onSmoothingChange: (value: number) => void;
  logScale: boolean;
  onLogScaleChange: (value: boolean) => void;
  children?: ReactNode;
}

/** Smoothing and log-scale apply to every chart at once, as in TensorBoard: one setting to compare by. */
export function ChartControls({
  smoothing,
  onSmoothingChange,
  logScale,
  onLogScaleChange,
  children,
}: ChartControlsProps) {
  const id = useId();
  return (
    <div className="flex flex-wrap items-center gap-x-6 gap-y-3 text-sm">
      <div className="flex items-center gap-3">
        <label htmlFor={`${id}-smoothing`} className="font-medium text-fg">
          Smoothing
        </label>
        <input
          id={`${id}-smoothing`}
          type="range"
          min={0}
          max={0.99}
          step={0.01}
          value={Math.min(smoothing, MAX_SMOOTHING)}
          onChange={(event) => onSmoothingChange(Number(event.target.value))}
          className="w-36 accent-[var(--tb-accent)]"
          data-testid="chart-smoothing"
        />
        <output htmlFor={`${id}-smoothing`} className="w-10 text-right font-mono text-xs text-fg-muted tabular-nums">
          {smoothing.toFixed(2)}
        </output>
      </div>
      <label className="inline-flex cursor-pointer items-center gap-2">
        <input
          type="checkbox"
          checked={logScale}
          onChange={(event) => onLogScaleChange(event.target.checked)}
          className={cx('size-4 rounded border-line-strong accent-[var(--tb-accent)]')}
          data-testid="chart-log-scale"
        />
        <span className="font-medium text-fg">Log scale</span>
      </label>
      {children}
    </div>
  );
}
