import { describe, expect, it } from 'vitest';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import { SFT_DEFAULT_BATCH_SIZE } from '@/lib/schemas/training-jobs';
import { inspectSftText } from './sft-dataset';
import {
  blocksSubmit,
  effectiveModelId,
  estimateInputs,
  fileProblemOf,
  hasInvalidLines,
  initialSftFileState,
  linkedModelMissing,
  READ_ERROR,
  resolveStartFrom,
  sftFileReducer,
  type SftFileAction,
  type SftFileState,
} from './state';

const line = (i: number) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: `What is ${i} + 1?` },
      { role: 'assistant', content: String(i + 1) },
    ],
  });
const lines = (count: number) => Array.from({ length: count }, (_, i) => line(i)).join('\n');
const inspect = (text: string) => inspectSftText('train.jsonl', text);
const file = (name: string, text: string) => new File([text], name);
const read = (name: string, text: string): SftFileAction => ({
  type: 'read',
  file: file(name, text),
  inspection: inspect(text),
});
const run = (state: SftFileState, ...actions: SftFileAction[]) => actions.reduce(sftFileReducer, state);
const model = (id: string, entity: string) => ({ id, entity }) as ModelSummaryDto;
const settings = { batch_size: '4', epochs: '10', validation_split: '0' };

describe('SFT form: reading the file', () => {
  it('starts with no file, nothing read and the file problem hidden', () => {
    expect(initialSftFileState).toEqual({ chosen: null, reading: false, readError: null, showFileProblem: false });
    expect(fileProblemOf(initialSftFileState.chosen)).toBe('Choose a dataset file');
  });

  it('is reading between the pick and the check, then holds the file and its inspection', () => {
    const reading = run(initialSftFileState, { type: 'readStarted' });
    expect(reading).toMatchObject({ reading: true, chosen: null });
    const done = run(reading, read('greetings.jsonl', lines(5)));
    expect(done.reading).toBe(false);
    expect(done.chosen?.file.name).toBe('greetings.jsonl');
    expect(done.chosen?.inspection).toMatchObject({ exampleCount: 5, errorCount: 0 });
    expect(fileProblemOf(done.chosen)).toBeUndefined();
  });

  it('keeps the previous file while the next one is read, and replaces it once read', () => {
    const first = run(initialSftFileState, { type: 'readStarted' }, read('a.jsonl', lines(2)));
    const second = run(first, { type: 'readStarted' });
    expect(second).toMatchObject({ reading: true });
    expect(second.chosen?.file.name).toBe('a.jsonl');
    expect(run(second, read('b.jsonl', lines(3))).chosen?.inspection.exampleCount).toBe(3);
  });

  it('a file that cannot be read drops the previous one and says so; the next pick clears the error', () => {
    const failed = run(
      initialSftFileState,
      { type: 'readStarted' },
      read('a.jsonl', lines(2)),
      { type: 'readStarted' },
      {
        type: 'readFailed',
      },
    );
    expect(failed).toMatchObject({ reading: false, chosen: null, readError: READ_ERROR });
    expect(run(failed, { type: 'readStarted' }).readError).toBeNull();
  });

  it('a refused submit shows the file problem from then on', () => {
    const state = run(initialSftFileState, { type: 'submitRefused' });
    expect(state.showFileProblem).toBe(true);
    expect(run(state, { type: 'readStarted' }, read('a.jsonl', lines(1))).showFileProblem).toBe(true);
  });
});

describe('SFT form: the file problem', () => {
  it('names invalid lines before an empty file, and a file without examples', () => {
    const broken = run(initialSftFileState, read('broken.jsonl', `${line(0)}\n{not json\n`));
    expect(hasInvalidLines(broken)).toBe(true);
    expect(fileProblemOf(broken.chosen)).toBe('Fix the invalid lines listed above');
    const allBroken = run(initialSftFileState, read('x.jsonl', '{not json'));
    expect(fileProblemOf(allBroken.chosen)).toBe('Fix the invalid lines listed above');
    const blank = run(initialSftFileState, read('blank.jsonl', '\n\n'));
    expect(hasInvalidLines(blank)).toBe(false);
    expect(fileProblemOf(blank.chosen)).toBe('The file has no examples');
  });

  it('blocks a submit without a model, with a file problem, a hold-out problem or while reading', () => {
    const good = run(initialSftFileState, read('a.jsonl', lines(4)));
    expect(blocksSubmit(good, true, undefined)).toBe(false);
    expect(blocksSubmit(good, false, undefined)).toBe(true);
    expect(blocksSubmit(initialSftFileState, true, undefined)).toBe(true);
    expect(blocksSubmit(good, true, 'Holding examples out needs at least 2 examples')).toBe(true);
    expect(blocksSubmit(run(good, { type: 'readStarted' }), true, undefined)).toBe(true);
  });
});

describe('SFT form: the model and where it starts from', () => {
  const models = [model('m1', 'alice'), model('m2', 'team'), model('m3', 'team')];

  it('the picked model, else the linked one, else the selected entity’s first, else the first', () => {
    expect(effectiveModelId('m3', 'm2', 'alice', models)).toBe('m3');
    expect(effectiveModelId('', 'm2', 'alice', models)).toBe('m2');
    expect(effectiveModelId(undefined, 'gone', 'team', models)).toBe('m2');
    expect(effectiveModelId('', null, 'nobody', models)).toBe('m1');
    expect(effectiveModelId('', null, 'alice', [])).toBe('');
  });

  it('a linked model is missing only once the list has loaded without it', () => {
    expect(linkedModelMissing('gone', true, models)).toBe(true);
    expect(linkedModelMissing('gone', false, models)).toBe(false);
    expect(linkedModelMissing('m2', true, models)).toBe(false);
    expect(linkedModelMissing(null, true, models)).toBe(false);
  });

  it('resolves the start: base, a step the model has, else the latest', () => {
    expect(resolveStartFrom(undefined, [1, 2])).toBe('latest');
    expect(resolveStartFrom('latest', [1, 2])).toBe('latest');
    expect(resolveStartFrom('base', [])).toBe('base');
    expect(resolveStartFrom('2', [1, 2])).toBe(2);
    // A stale link or another model picked: the step is not among this model's checkpoints.
    expect(resolveStartFrom('7', [1, 2])).toBe('latest');
    expect(resolveStartFrom('0', [])).toBe('latest');
  });
});

describe('SFT form: the estimate inputs', () => {
  it('counts steps as the trainer batches them: examples × epochs ÷ batch, the last batch short', () => {
    expect(estimateInputs(settings, inspect(lines(4))).plan).toEqual({
      examples: 4,
      heldOut: 0,
      epochs: 10,
      batch: 4,
      steps: 10,
    });
    expect(estimateInputs({ ...settings, batch_size: '3', epochs: '2' }, inspect(lines(4))).plan?.steps).toBe(4);
  });

  it('"auto" batches as the API default', () => {
    const plan = estimateInputs({ ...settings, batch_size: 'auto', epochs: '1' }, inspect(lines(5))).plan;
    expect(plan).toMatchObject({ batch: SFT_DEFAULT_BATCH_SIZE, steps: Math.ceil(5 / SFT_DEFAULT_BATCH_SIZE) });
  });

  it('holds examples out of the count, and needs two examples to hold any out', () => {
    const held = estimateInputs({ ...settings, validation_split: '0.2' }, inspect(lines(10)));
    expect(held).toMatchObject({ holdOut: 0.2, holdOutProblem: undefined });
    expect(held.plan).toMatchObject({ examples: 8, heldOut: 2, steps: 20 });
    const one = estimateInputs({ ...settings, validation_split: '0.1' }, inspect(lines(1)));
    expect(one.holdOutProblem).toBe('Holding examples out needs at least 2 examples');
    expect(one.plan).toMatchObject({ examples: 1, heldOut: 0 });
    expect(estimateInputs(settings, inspect(lines(1))).holdOutProblem).toBeUndefined();
  });

  it('no plan without a clean file with examples', () => {
    expect(estimateInputs(settings, undefined).plan).toBeNull();
    expect(estimateInputs(settings, inspect(`${line(0)}\n{not json`)).plan).toBeNull();
    expect(estimateInputs(settings, inspect('\n')).plan).toBeNull();
    // Invalid lines are the file's problem, not the hold-out's.
    expect(
      estimateInputs({ ...settings, validation_split: '0.3' }, inspect('{not json')).holdOutProblem,
    ).toBeUndefined();
  });

  it('one bad setting leaves no plan but the others still read', () => {
    const badEpochs = estimateInputs({ ...settings, epochs: '0', validation_split: '0.2' }, inspect(lines(10)));
    expect(badEpochs.plan).toBeNull();
    expect(badEpochs.holdOut).toBe(0.2);
    expect(estimateInputs({ ...settings, batch_size: 'many' }, inspect(lines(4))).plan).toBeNull();
    // An empty epochs field has no number; an empty batch size reads as “auto”.
    expect(estimateInputs({ ...settings, epochs: '' }, inspect(lines(4))).plan).toBeNull();
    expect(estimateInputs({ epochs: '1', validation_split: '0' }, inspect(lines(4))).plan?.batch).toBe(
      SFT_DEFAULT_BATCH_SIZE,
    );
  });
});
