'use client';

import { useId, useState } from 'react';
import { cx } from '@/components/ui/cx';
import type { TokenEntry } from '@/lib/client/chat/chat-reply';
import {
  confidenceLabel,
  formatProbability,
  logprobBackground,
  logprobToProbability,
  visibleToken,
} from '@/lib/client/chat/logprob-color';

/**
 * The answer as sampled tokens, each tinted by its probability. Hovering or focusing a token (Tab moves
 * through them) shows the alternatives the model weighed at that position in a tooltip that the token
 * names with aria-describedby, so a screen reader reads the numbers too. One tooltip for the whole view
 * keeps long answers light.
 */
export function TokenView({ tokens, label }: { tokens: TokenEntry[]; label: string }) {
  const id = useId();
  const [active, setActive] = useState<{ index: number; top: number; left: number } | null>(null);
  const tooltipId = `${id}-tooltip`;
  const current = active === null ? undefined : tokens[active.index];

  // The tooltip floats under the token, inside the view's box (offsets are relative to the wrapper).
  function show(index: number, target: HTMLElement) {
    const box = target.offsetParent instanceof HTMLElement ? target.offsetParent.clientWidth : 320;
    setActive({
      index,
      top: target.offsetTop + target.offsetHeight + 4,
      left: Math.max(0, Math.min(target.offsetLeft, box - 264)),
    });
  }

  return (
    <div className="relative" onMouseLeave={() => setActive(null)}>
      <p className="sr-only">
        {label}: tokens coloured by probability, green likely, red unlikely. Focus a token for its alternatives.
      </p>
      <div
        className="font-mono text-[12.5px] leading-7 break-words whitespace-pre-wrap text-fg"
        data-testid="token-view"
      >
        {tokens.map((token, i) => {
          const probability = logprobToProbability(token.logprob);
          return (
            <button
              key={i}
              type="button"
              data-testid="token"
              aria-describedby={active?.index === i ? tooltipId : undefined}
              aria-label={`${JSON.stringify(token.token)}, ${formatProbability(probability)}`}
              onMouseEnter={(event) => show(i, event.currentTarget)}
              onFocus={(event) => show(i, event.currentTarget)}
              onBlur={() => setActive((a) => (a?.index === i ? null : a))}
              onKeyDown={(event) => {
                if (event.key === 'Escape') setActive(null);
              }}
              style={{ background: logprobBackground(token.logprob) }}
              className={cx(
                'mx-px cursor-default rounded-sm px-0.5 py-0.5 leading-5 outline-offset-1 focus-visible:outline-2 focus-visible:outline-ring',
                active?.index === i && 'ring-1 ring-fg/40',
              )}
            >
              {visibleToken(token.token, token.bytes)}
            </button>
          );
        })}
      </div>
      {current && active !== null ? (
        <div
          id={tooltipId}
          role="tooltip"
          data-testid="token-tooltip"
          style={{ top: active.top, left: active.left }}
          className="pointer-events-none absolute z-20 w-64 rounded-lg border border-line bg-surface-raised p-3 text-xs shadow-lg"
        >
          <p className="text-fg">
            <span className="font-mono font-semibold break-all">{visibleToken(current.token, current.bytes)}</span>
            <span className="text-fg-muted">
              {' '}
              {formatProbability(logprobToProbability(current.logprob))} (
              {confidenceLabel(logprobToProbability(current.logprob))}) · logprob{' '}
              {Number.isFinite(current.logprob) ? current.logprob.toFixed(3) : '−∞'}
            </span>
          </p>
          {current.top.length > 0 ? (
            <table className="mt-2 w-full">
              <caption className="sr-only">Top alternatives</caption>
              <thead>
                <tr className="text-left text-fg-subtle">
                  <th scope="col" className="pb-1 font-medium">
                    Alternative
                  </th>
                  <th scope="col" className="pb-1 text-right font-medium">
                    Probability
                  </th>
                </tr>
              </thead>
              <tbody>
                {current.top.map((alt, j) => {
                  const p = logprobToProbability(alt.logprob);
                  return (
                    <tr key={j} className={cx(sameToken(alt, current) && 'font-semibold')}>
                      <td className="py-0.5 pr-3">
                        <span
                          className="rounded-sm px-1 font-mono"
                          style={{ background: logprobBackground(alt.logprob) }}
                        >
                          {visibleToken(alt.token, alt.bytes)}
                        </span>
                      </td>
                      <td className="py-0.5 text-right text-fg-muted tabular-nums">{formatProbability(p)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          ) : (
            <p className="mt-1 text-fg-subtle">No alternatives: turn on logprobs with top logprobs above 0.</p>
          )}
        </div>
      ) : null}
    </div>
  );
}

function sameToken(a: Pick<TokenEntry, 'token' | 'bytes'>, b: Pick<TokenEntry, 'token' | 'bytes'>): boolean {
  return a.token === b.token && (a.bytes ?? []).join(',') === (b.bytes ?? []).join(',');
}

/** The colour key for the token view. */
export function TokenLegend() {
  return (
    <div className="flex items-center gap-2 text-xs text-fg-subtle" aria-hidden="true">
      <span>Unlikely</span>
      <span className="flex overflow-hidden rounded-sm">
        {[-4, -2, -1, -0.5, -0.2, 0].map((lp) => (
          <span key={lp} className="h-3 w-4" style={{ background: logprobBackground(lp) }} />
        ))}
      </span>
      <span>Likely</span>
    </div>
  );
}
