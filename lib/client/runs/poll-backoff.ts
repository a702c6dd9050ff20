export const POLL_MIN_MS = 1_000;
export const POLL_MAX_MS = 5_000;

/**
 * Delay before the next poll of a running job: 1 s right after something changed, then ×1.5 per poll
 * that brought nothing new, up to 5 s. A busy job is followed closely; an idle one (queued behind
 * others, or a long step) costs one request every 5 s.
 */
export function pollDelay(unchangedPolls: number): number {
  const n = Math.max(0, Math.floor(unchangedPolls));
  return Math.min(POLL_MAX_MS, Math.round(POLL_MIN_MS * 1.5 ** n));
}

export const TERMINAL_JOB_STATUSES = ['COMPLETED', 'FAILED'] as const;

export function isTerminalStatus(status: string): boolean {
  return (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);
}

/** completed/total as 0–1, or null while the total is unknown (a queued job has no num_sequences yet). */
export function progressFraction(completed: number, total: number | null): number | null {
  if (total === null || total <= 0) return null;
  return Math.min(1, Math.max(0, completed / total));
}
