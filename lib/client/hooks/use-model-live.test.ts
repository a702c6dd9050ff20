import { describe, expect, it } from 'vitest';
import type { ModelTinkerDto } from '@/lib/schemas/tinker-clients';
import type { TrainingJobDto } from '@/lib/schemas/training-jobs';
import { isActive, liveSignature } from './use-model-live';

function tinker(status: ModelTinkerDto['training_client']['status'], optimSteps: number): ModelTinkerDto {
  return {
    training_client: {
      model_id: '00000000-0000-4000-8000-000000000000',
      entity: 'e',
      project: 'p',
      model_name: 'm',
      base_model: 'b',
      status,
      worker_id: null,
      waiting_reason: null,
      lora: { rank: 8, alpha: 32, train_attn: true, train_mlp: true, train_unembed: false },
      optim_steps: optimSteps,
      queued_requests: 0,
      running_requests: 0,
      error: null,
      error_category: null,
      sdk_version: '0.25.0',
      created_at: '2026-01-01T00:00:00Z',
      last_request_at: '2026-01-01T00:00:00Z',
      ended_at: null,
    },
    requests: [],
    saved: [],
  };
}

const job = (status: TrainingJobDto['status']) => ({ status }) as TrainingJobDto;

describe('the model page’s live polling', () => {
  it('follows closely while a job is open or a Tinker training client is live', () => {
    expect(isActive([job('COMPLETED')], null)).toBe(false);
    expect(isActive([job('RUNNING')], null)).toBe(true);
    expect(isActive([], tinker('ready', 0))).toBe(true);
    expect(isActive([], tinker('waiting', 0))).toBe(true);
    expect(isActive([], tinker('failed', 3))).toBe(false);
  });

  it('sees an optim step of a training client as a change, which refetches the training curve', () => {
    expect(liveSignature(undefined, [], tinker('ready', 1))).not.toBe(liveSignature(undefined, [], tinker('ready', 2)));
    expect(liveSignature(undefined, [], tinker('ready', 2))).toBe(liveSignature(undefined, [], tinker('ready', 2)));
    expect(liveSignature(undefined, [], null)).toBe(liveSignature(undefined, []));
  });
});
