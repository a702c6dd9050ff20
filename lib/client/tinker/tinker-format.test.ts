import { describe, expect, it } from 'vitest';
import type { TinkerRequestSummaryDto, TinkerSavedWeightsDto } from '@/lib/schemas/tinker-clients';
import {
  errorCategoryLabel,
  formatBytes,
  formatRequestDuration,
  loraParts,
  openRequestsText,
  requestDurationMs,
  sortRequests,
  sortSavedWeights,
} from './tinker-format';

describe('loraParts and openRequestsText', () => {
  it('names the trained parts in the SDK’s words', () => {
    const lora = { rank: 8, alpha: 32, train_attn: true, train_mlp: true, train_unembed: false };
    expect(loraParts(lora)).toEqual(['attn', 'mlp']);
    expect(loraParts({ ...lora, train_attn: false, train_mlp: false })).toEqual([]);
    expect(loraParts({ ...lora, train_unembed: true })).toEqual(['attn', 'mlp', 'unembed']);
  });

  it('says what is open, running first, or nothing', () => {
    expect(openRequestsText({ queued_requests: 0, running_requests: 0 })).toBeNull();
    expect(openRequestsText({ queued_requests: 1200, running_requests: 1 })).toBe('1 running · 1,200 queued');
    expect(openRequestsText({ queued_requests: 2, running_requests: 0 })).toBe('2 queued');
  });

  it('labels error categories by whom they blame', () => {
    expect(errorCategoryLabel('user')).toBe('user error');
    expect(errorCategoryLabel('server')).toBe('server error');
    expect(errorCategoryLabel('unknown')).toBe('error');
    expect(errorCategoryLabel(null)).toBe('error');
  });
});

function req(
  id: string,
  status: TinkerRequestSummaryDto['status'],
  seq: number | null,
  created: string,
): TinkerRequestSummaryDto {
  return {
    id,
    kind: 'forward_backward',
    seq_id: seq,
    status,
    error: null,
    error_category: null,
    created_at: `2026-01-01T00:00:${created}Z`,
    started_at: null,
    finished_at: null,
  };
}

describe('sortRequests', () => {
  it('puts the open requests on top in the order they run, then the finished ones newest first', () => {
    const rows = [
      req('q4', 'queued', 4, '09'),
      req('q3', 'queued', 3, '10'),
      req('d2', 'done', 2, '05'),
      req('r', 'running', 1, '01'),
      req('f', 'failed', null, '07'),
      req('s', 'queued', null, '08'),
    ];
    expect(sortRequests(rows).map((r) => r.id)).toEqual(['r', 'q3', 'q4', 's', 'f', 'd2']);
  });
});

describe('requestDurationMs', () => {
  it('measures from the start to the end, or to now while it runs; nothing before it starts', () => {
    const started = '2026-01-01T00:00:00.000Z';
    expect(requestDurationMs({ started_at: started, finished_at: '2026-01-01T00:00:01.500Z' }, null)).toBe(1500);
    expect(requestDurationMs({ started_at: started, finished_at: null }, Date.parse(started) + 2000)).toBe(2000);
    expect(requestDurationMs({ started_at: started, finished_at: null }, null)).toBeNull();
    expect(requestDurationMs({ started_at: null, finished_at: '2026-01-01T00:00:01Z' }, 0)).toBeNull();
  });
});

describe('formatRequestDuration', () => {
  it('shows the quick requests to the millisecond or tenth of a second, long ones as a job’s duration', () => {
    expect(formatRequestDuration(0)).toBe('0 ms');
    expect(formatRequestDuration(230.4)).toBe('230 ms');
    expect(formatRequestDuration(2_399)).toBe('2.3 s');
    expect(formatRequestDuration(9_999)).toBe('9.9 s');
    expect(formatRequestDuration(185_000)).toBe('3 min 5 s');
  });
});

describe('formatBytes', () => {
  it('uses decimal units with at most one decimal', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(1000)).toBe('1 kB');
    expect(formatBytes(3_456)).toBe('3.5 kB');
    expect(formatBytes(12_100_000)).toBe('12.1 MB');
    expect(formatBytes(456_000_000)).toBe('456 MB');
    expect(formatBytes(2.5e12)).toBe('2.5 TB');
  });
});

describe('sortSavedWeights', () => {
  const w = (name: string, kind: 'training' | 'sampler', created: string): TinkerSavedWeightsDto => ({
    kind,
    name,
    tinker_path: `tinker://m/${kind === 'sampler' ? 'sampler_weights' : 'weights'}/${name}`,
    step: kind === 'sampler' ? 1 : null,
    size_bytes: 1,
    ephemeral: false,
    created_at: `2026-01-01T00:00:${created}Z`,
    expires_at: null,
  });
  it('lists sampler weights (checkpoints) first, each kind newest first', () => {
    const sorted = sortSavedWeights([w('a', 'training', '09'), w('b', 'sampler', '01'), w('c', 'sampler', '05')]);
    expect(sorted.map((x) => x.name)).toEqual(['c', 'b', 'a']);
  });
});
