import type {
  TinkerRequestSummaryDto,
  TinkerSavedWeightsDto,
  TinkerTrainingClientDto,
} from '@/lib/schemas/tinker-clients';
import { formatDuration } from '../format/format-time';

/*
 * Formatters of the Tinker views (the Jobs page's list, the Workers page, a Tinker model's card): LoRA settings, open
 * requests, requests in the order a person looks for them, durations and sizes. Kept apart from tinker-clients.ts,
 * which every model page loads, so that only the pages that show these carry them. Pure, unit-tested beside it.
 */

/** The parts of the model LoRA trains, in the SDK's words (docs/tinker.md §2.7): attn, mlp, unembed. */
export function loraParts(lora: TinkerTrainingClientDto['lora']): string[] {
  const parts: string[] = [];
  if (lora.train_attn) parts.push('attn');
  if (lora.train_mlp) parts.push('mlp');
  if (lora.train_unembed) parts.push('unembed');
  return parts;
}

/** "queued" and "running" counts as one phrase; null when nothing is open. */
export function openRequestsParts(c: Pick<TinkerTrainingClientDto, 'queued_requests' | 'running_requests'>): string[] {
  const parts: string[] = [];
  if (c.running_requests > 0) parts.push(`${c.running_requests.toLocaleString('en')} running`);
  if (c.queued_requests > 0) parts.push(`${c.queued_requests.toLocaleString('en')} queued`);
  return parts;
}

export function openRequestsText(c: Pick<TinkerTrainingClientDto, 'queued_requests' | 'running_requests'>) {
  const parts = openRequestsParts(c);
  return parts.length === 0 ? null : parts.join(' · ');
}

/** Who an error's category blames (the SDK's RequestFailedError carries the same): the caller, the server, or neither. */
export function errorCategoryLabel(category: string | null): string {
  if (category === 'user') return 'user error';
  if (category === 'server') return 'server error';
  return 'error';
}

export const isOpen = (r: Pick<TinkerRequestSummaryDto, 'status'>) => r.status === 'queued' || r.status === 'running';

/**
 * The requests table's order: what is open on top (running, then queued in the order they will run: seq_id, then
 * arrival), then the finished ones newest first. The API lists them by arrival, newest first.
 */
export function sortRequests<R extends TinkerRequestSummaryDto>(requests: readonly R[]): R[] {
  const seq = (r: R) => r.seq_id ?? Number.MAX_SAFE_INTEGER;
  const time = (iso: string) => Date.parse(iso);
  return [...requests].sort((a, b) => {
    if (isOpen(a) !== isOpen(b)) return isOpen(a) ? -1 : 1;
    if (isOpen(a)) {
      if (a.status !== b.status) return a.status === 'running' ? -1 : 1;
      return seq(a) - seq(b) || time(a.created_at) - time(b.created_at);
    }
    return time(b.created_at) - time(a.created_at) || seq(b) - seq(a);
  });
}

/**
 * How long a request has taken: from when a worker started it to when it finished, or to `now` while it runs; null
 * for one that never started (queued, or refused at submission) or when `now` is not known yet (server render).
 */
export function requestDurationMs(
  r: Pick<TinkerRequestSummaryDto, 'started_at' | 'finished_at'>,
  now: number | null,
): number | null {
  if (r.started_at === null) return null;
  const end = r.finished_at !== null ? Date.parse(r.finished_at) : now;
  return end === null ? null : Math.max(0, end - Date.parse(r.started_at));
}

/** A request's duration: "230 ms" and "2.3 s" for the quick ones most are, then as a job's ("3 min 5 s"). */
export function formatRequestDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)} s`;
  return formatDuration(ms);
}

/** "512 B", "3.4 kB", "12.1 MB": decimal units, as file managers and the checkpoint downloads show them. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1000) return `${Math.max(0, Math.round(bytes))} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = -1;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value >= 100 ? Math.round(value) : Number(value.toFixed(1))} ${units[unit]}`;
}

/** Saved weights in the order the card lists them: sampler weights first (they are checkpoints), newest first. */
export function sortSavedWeights(saved: readonly TinkerSavedWeightsDto[]): TinkerSavedWeightsDto[] {
  return [...saved].sort(
    (a, b) =>
      Number(a.kind === 'training') - Number(b.kind === 'training') ||
      Date.parse(b.created_at) - Date.parse(a.created_at) ||
      a.name.localeCompare(b.name),
  );
}
