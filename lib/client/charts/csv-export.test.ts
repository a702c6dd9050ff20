import { describe, expect, it } from 'vitest';
import { csvField, csvFileName, seriesToCsv } from './csv-export';

describe('csvField', () => {
  it('quotes what needs quoting and neutralises formulas', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('-1+1')).toBe("'-1+1");
    expect(csvField(-0.5)).toBe('-0.5');
    expect(csvField(Number.NaN)).toBe('');
    expect(csvField(null)).toBe('');
  });
});

describe('seriesToCsv', () => {
  it('aligns series by step and leaves missing cells empty', () => {
    const csv = seriesToCsv([
      {
        name: 'train/reward',
        points: [
          [0, 0.1],
          [1, 0.2],
        ],
      },
      {
        name: 'val/reward',
        points: [
          [1, 0.3],
          [2, 1e-7],
        ],
      },
    ]);
    expect(csv).toBe('step,train/reward,val/reward\r\n0,0.1,\r\n1,0.2,0.3\r\n2,,1e-7\r\n');
  });

  it('writes just a header for no data', () => {
    expect(seriesToCsv([])).toBe('step\r\n');
  });
});

describe('csvFileName', () => {
  it('makes a safe file name', () => {
    expect(csvFileName('my-model reward/score')).toBe('my-model-reward-score.csv');
    expect(csvFileName('////')).toBe('series.csv');
  });
});
