import type { z } from 'zod';
import type { baseModelSchema } from '@/lib/schemas/base-models';

export type BaseModel = z.infer<typeof baseModelSchema>;

/** 9_830_400 → "9.8M", 596_049_920 → "596M", 8_030_261_248 → "8.0B": the way model cards round sizes. */
export function formatParameterCount(n: number): string {
  const [value, unit] = n >= 1e9 ? [n / 1e9, 'B'] : n >= 1e6 ? [n / 1e6, 'M'] : n >= 1e3 ? [n / 1e3, 'K'] : [n, ''];
  return `${value >= 100 || unit === '' ? Math.round(value) : value.toFixed(1)}${unit}`;
}

const TRAINED_BY: Record<NonNullable<BaseModel['trained_by']>, string> = {
  builtin: 'built-in trainer',
  'python-worker': 'Python worker',
};
const SERVED_BY: Record<BaseModel['served_by'], string> = { builtin: 'built-in engine', vllm: 'vLLM' };

/** One line per base model for the picker: size, context, who trains and serves it, and why it is unavailable. */
export function baseModelFacts(m: BaseModel): string {
  const parts = [
    m.parameters !== null ? `${formatParameterCount(m.parameters)} params` : null,
    m.context_length !== null ? `${m.context_length.toLocaleString('en-US')} ctx` : null,
    `trains: ${m.trained_by ? TRAINED_BY[m.trained_by] : 'not trainable here'}`,
    `serves: ${SERVED_BY[m.served_by]}`,
  ].filter(Boolean);
  return parts.join(' · ');
}
