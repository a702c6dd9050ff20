import { describe, expect, it } from 'vitest';
import { parseSftJsonl, SftDataError } from '@/lib/schemas/sft-data';
import { datasetNameFromFile, inspectSftText, parseBatchSize, parseLearningRate } from './sft-dataset';

const ok = (q: string) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: q },
      { role: 'assistant', content: 'a' },
    ],
  });
const badLast = JSON.stringify({ messages: [{ role: 'user', content: 'q' }] });

describe('inspectSftText', () => {
  it('counts examples, previews the first ones and skips blank lines', () => {
    const result = inspectSftText('train.jsonl', [ok('1'), '', ok('2'), ok('3'), ok('4')].join('\r\n'), {
      previewCount: 2,
    });
    expect(result.exampleCount).toBe(4);
    expect(result.errors).toEqual([]);
    expect(result.preview.map((e) => [e.line, e.messages[0].content])).toEqual([
      [1, '1'],
      [3, '2'],
    ]);
  });

  it('reports every bad line with its number, as the server words the first one', () => {
    const text = [ok('1'), ok('2'), badLast, '{nope', ok('5')].join('\n');
    const result = inspectSftText('train.jsonl', text);
    expect(result.exampleCount).toBe(3);
    expect(result.errors.map((e) => e.line)).toEqual([3, 4]);
    expect(result.errors[0].message).toBe('last message must have role "assistant"');
    let serverError: SftDataError | undefined;
    try {
      parseSftJsonl('train.jsonl', text);
    } catch (err) {
      serverError = err as SftDataError;
    }
    expect(serverError?.message).toBe(`train.jsonl line 3: ${result.errors[0].message}`);
  });

  it('caps the list but keeps the count', () => {
    const result = inspectSftText('train.jsonl', Array(30).fill('[]').join('\n'), { maxErrors: 5 });
    expect(result.errors).toHaveLength(5);
    expect(result.errorCount).toBe(30);
  });
});

describe('form fields', () => {
  it('derives a dataset name the API accepts', () => {
    expect(datasetNameFromFile('my data (v2).jsonl')).toBe('my-data-v2');
    expect(datasetNameFromFile('..jsonl')).toBe('dataset');
  });

  it('reads the batch size', () => {
    expect(parseBatchSize('')).toEqual({ value: 'auto' });
    expect(parseBatchSize(' Auto ')).toEqual({ value: 'auto' });
    expect(parseBatchSize('8')).toEqual({ value: 8 });
    expect(parseBatchSize('0')).toHaveProperty('error');
    expect(parseBatchSize('2.5')).toHaveProperty('error');
  });

  it('reads one learning rate or a schedule', () => {
    expect(parseLearningRate('')).toEqual({ value: undefined });
    expect(parseLearningRate('5e-5')).toEqual({ value: 5e-5 });
    expect(parseLearningRate('1e-4, 5e-5')).toEqual({ value: [1e-4, 5e-5] });
    expect(parseLearningRate('0')).toHaveProperty('error');
    expect(parseLearningRate('1e-4,,')).toHaveProperty('error');
    // The API's ceiling, when given: 1e308 would only blow the weights up.
    expect(parseLearningRate('2', 1)).toEqual({
      error: 'Use a positive number up to 1 such as 5e-5, or a comma-separated list of them',
    });
    expect(parseLearningRate('1, 0.5', 1)).toEqual({ value: [1, 0.5] });
  });
});
