/**
 * Stop-string rules of docs/contract.md §8.5, shared by the engine (which decides to stop) and the response builders
 * (which cut the text), so both agree on where a match is.
 */

export interface StopStringMatch {
  /** The stop string that matched (the `stop_reason`). */
  stop: string;
  /** Where the output text ends: the match start, or its end with `include_stop_str_in_output`. */
  cutAt: number;
}

/**
 * vLLM's `check_stop_strings`: after a token added `newCharCount` characters to `text`, search only the
 * tail that can hold a new match (the new text plus len(stop) − 1 characters before it), stop strings in
 * list order, first match wins. Indices are UTF-16 offsets; restricting the window this way finds the same
 * matches as Python's code-point offsets do.
 */
export function findStopString(
  text: string,
  newCharCount: number,
  stops: readonly string[],
  includeInOutput: boolean,
): StopStringMatch | null {
  if (newCharCount <= 0 || stops.length === 0) return null;
  for (const stop of stops) {
    if (stop === '') continue;
    const from = Math.max(0, text.length + 1 - newCharCount - stop.length);
    const at = text.indexOf(stop, from);
    if (at === -1) continue;
    return { stop, cutAt: includeInOutput ? Math.min(text.length, at + stop.length) : at };
  }
  return null;
}

function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * Characters a stream keeps back until the request finishes (docs/contract.md §8.5 "streaming holdback"): max(len(s)) − 1
 * code points, so that a stop string completed by a later token can still be cut; 0 when the stop
 * strings are included in the output anyway.
 */
export function stopHoldback(stops: readonly string[], includeInOutput: boolean): number {
  if (includeInOutput || stops.length === 0) return 0;
  return Math.max(0, Math.max(...stops.map(codePointLength)) - 1);
}

/** The UTF-16 end of `text` once its last `holdback` code points are kept back (never splits a surrogate pair). */
export function releasableEnd(text: string, holdback: number): number {
  let end = text.length;
  for (let k = 0; k < holdback && end > 0; k++) {
    const low = text.charCodeAt(end - 1);
    const high = end >= 2 ? text.charCodeAt(end - 2) : 0;
    end -= low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff ? 2 : 1;
  }
  return end;
}
