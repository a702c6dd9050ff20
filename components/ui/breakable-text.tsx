import { Fragment } from 'react';

/**
 * Text with line-break opportunities after each `/` and `_`, for the identifiers a narrow column must wrap: to the
 * line breaker `val/exact_match_accuracy`, `Qwen/Qwen3-0.6B` or `TUNEBOARD_RUNNER_CONCURRENCY` is one word, and
 * one such word held a table wider than its card at 1280 px. Breaking anywhere (`wrap-anywhere`) would split the
 * words in the middle instead.
 */
export function BreakableText({ text, at = 'slash-underscore' }: { text: string; at?: 'slash-underscore' | 'slash' }) {
  // `slash`: a path (`tinker://…/sampler_weights/final`), whose segments read best whole.
  return text.split(at === 'slash' ? /(?<=\/)/ : /(?<=[/_])/).map((part, i) => (
    <Fragment key={i}>
      {i > 0 ? <wbr /> : null}
      {part}
    </Fragment>
  ));
}
