/**
 * Stop-string rules shared by the engine (which decides to stop) and the response builders (which cut the
 * text), so both agree on where a match is. The matching rule itself lives in the engine.
 */
export { findStopString, type StopStringMatch } from '@/lib/engine/stop-strings';

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
