import { validationCount } from '@/lib/schemas/training-jobs';

/**
 * Splits an SFT dataset into the examples a job trains on and those it holds out (`validation_split`). The held-out
 * ones are evenly spaced through the file (the middle of each of `count` equal stretches), not drawn at random: the
 * same file and share always hold out the same lines, so jobs compare, and a file sorted by topic is covered from
 * end to end. Both sides keep file order. The server splits once, so every worker trains on the same examples.
 */
export function holdOutValidation<T>(examples: readonly T[], split: number): { train: T[]; validation: T[] } {
  const count = validationCount(examples.length, split);
  if (count === 0) return { train: [...examples], validation: [] };
  const held = new Set<number>();
  for (let i = 0; i < count; i++) held.add(Math.floor(((i + 0.5) * examples.length) / count));
  const train: T[] = [];
  const validation: T[] = [];
  examples.forEach((ex, i) => (held.has(i) ? validation : train).push(ex));
  return { train, validation };
}
