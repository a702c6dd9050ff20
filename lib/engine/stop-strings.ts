/**
 * vLLM's `check_stop_strings` (v1/engine/detokenizer.py), the one rule both the engine (which decides to
 * stop) and lib/inference's response builders (which cut the text) apply, so they agree on every match.
 */

export interface StopStringMatch {
  /** The stop string that matched (the `stop_reason`). */
  stop: string;
  /** Where the output text ends: the match start, or its end with `include_stop_str_in_output`. */
  cutAt: number;
}

/**
 * After a token added `newCharCount` characters to `text`, only the tail that can hold a new match is
 * searched (the new text plus len(stop) − 1 characters before it). When several stop strings match there,
 * the one whose match **ends** first wins, ties going to the earlier one in the list — what vLLM does since
 * it made multi-token steps agree with token-by-token ones; before that the first string in list order won,
 * which differs when one token adds several characters. Offsets are UTF-16 here, code points in Python; the
 * search window is anchored at the end of the text, so both find the same matches.
 */
export function findStopString(
  text: string,
  newCharCount: number,
  stops: readonly string[],
  includeInOutput: boolean,
): StopStringMatch | null {
  if (newCharCount <= 0 || stops.length === 0) return null;
  let best: { stop: string; at: number; end: number } | null = null;
  for (const stop of stops) {
    if (stop === '') continue;
    const from = Math.max(0, text.length + 1 - newCharCount - stop.length);
    const at = text.indexOf(stop, from);
    if (at === -1) continue;
    const end = at + stop.length;
    if (!best || end < best.end) best = { stop, at, end };
  }
  if (!best) return null;
  return { stop: best.stop, cutAt: includeInOutput ? Math.min(text.length, best.end) : best.at };
}
