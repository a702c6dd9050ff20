import { parseSftLine, SftDataError, type SftExample } from '@/lib/schemas/sft-data';

/**
 * Checks an SFT dataset in the browser with the server's own line parser (lib/schemas/sft-data.ts), so
 * a file that passes here is accepted by the upload, and a bad line is found before any byte is sent.
 * Every line is checked so that all problems can be fixed in one go, as the upload API lists them (both cap the
 * list, to keep a broken 100k-line file from flooding the page).
 */

export interface SftLineError {
  line: number;
  message: string;
}

export interface SftInspection {
  file: string;
  /** Valid examples (non-blank lines that parsed). */
  exampleCount: number;
  preview: SftExample[];
  errors: SftLineError[];
  /** All bad lines, including those beyond the `errors` cap. */
  errorCount: number;
}

export function inspectSftText(
  file: string,
  text: string,
  { previewCount = 3, maxErrors = 20 }: { previewCount?: number; maxErrors?: number } = {},
): SftInspection {
  const result: SftInspection = { file, exampleCount: 0, preview: [], errors: [], errorCount: 0 };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // Same blank-line and CRLF rules as parseSftJsonl on the server.
    const line = lines[i].replace(/\r$/, '');
    if (line.trim() === '') continue;
    try {
      const example = parseSftLine(file, i + 1, line);
      result.exampleCount++;
      if (result.preview.length < previewCount) result.preview.push(example);
    } catch (err) {
      if (!(err instanceof SftDataError)) throw err;
      result.errorCount++;
      if (result.errors.length < maxErrors) result.errors.push({ line: err.line, message: err.reason });
    }
  }
  return result;
}

/** The upload API's dataset name: the file name without extension, reduced to safe characters. */
export function datasetNameFromFile(fileName: string): string {
  const stem = fileName.replace(/\.[^.]*$/, '');
  const safe = stem
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .replace(/-+$/, '')
    .slice(0, 100);
  return safe || 'dataset';
}

export type BatchSizeInput = { value: 'auto' | number } | { error: string };
export type LearningRateInput = { value: number | number[] | undefined } | { error: string };

/** "auto" or a positive whole number, as the SFT config takes it. */
export function parseBatchSize(text: string): BatchSizeInput {
  const raw = text.trim().toLowerCase();
  if (raw === '' || raw === 'auto') return { value: 'auto' };
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) return { error: 'Use "auto" or a whole number of at least 1' };
  return { value };
}

/** Passes over the dataset: a whole number from 1 to the server's maximum. */
export function parseEpochs(text: string, max: number): { value: number } | { error: string } {
  const raw = text.trim();
  const value = Number(raw);
  if (raw === '' || !Number.isInteger(value) || value < 1 || value > max)
    return { error: `Use a whole number from 1 to ${max}` };
  return { value };
}

/**
 * One learning rate, or a comma-separated schedule (one value per optimizer step, as the SFT config
 * takes a list), each above 0 and at most `max`. Empty means the default.
 */
export function parseLearningRate(text: string, max = Infinity): LearningRateInput {
  const raw = text.trim();
  if (raw === '') return { value: undefined };
  const parts = raw.split(',').map((p) => p.trim());
  const values = parts.map(Number);
  if (parts.some((p) => p === '') || values.some((v) => !Number.isFinite(v) || v <= 0 || v > max))
    return {
      error: `Use a positive number${Number.isFinite(max) ? ` up to ${max}` : ''} such as 5e-5, or a comma-separated list of them`,
    };
  return { value: values.length === 1 ? values[0] : values };
}
