import type { z } from 'zod';
import type { ModelSummaryDto } from '@/lib/schemas/models';
import { SFT_DEFAULT_BATCH_SIZE, sftStepCount, validationCount } from '@/lib/schemas/training-jobs';
import { sftSettingsFormSchema, type SftSettingsFormValues } from '../forms/form-schemas';
import type { SftInspection } from './sft-dataset';

/*
 * The SFT launch form's own state (app/(dashboard)/sft/new/client.tsx) as a pure reducer, and what the form derives
 * from it and from its settings: the file's problem, the model and checkpoint it starts from, the estimate's inputs.
 * The settings themselves are react-hook-form's (typed text, checked with the request's schema); what that schema
 * cannot see (the file, the hold-out against the file's size) is decided here, unit-tested in state.test.ts.
 */

export interface ChosenFile {
  file: File;
  inspection: SftInspection;
}

export interface SftFileState {
  /** The last file read; kept while another one is being read (its preview is hidden meanwhile). */
  chosen: ChosenFile | null;
  reading: boolean;
  readError: string | null;
  /** A submit was refused in the browser: from then on the file's problem is shown under the drop zone. */
  showFileProblem: boolean;
}

export type SftFileAction =
  | { type: 'readStarted' }
  /** The file's text was read and checked line by line (inspectSftText). */
  | { type: 'read'; file: File; inspection: SftInspection }
  | { type: 'readFailed' }
  | { type: 'submitRefused' };

export const READ_ERROR = 'The file could not be read. Choose it again.';

export const initialSftFileState: SftFileState = {
  chosen: null,
  reading: false,
  readError: null,
  showFileProblem: false,
};

export function sftFileReducer(state: SftFileState, action: SftFileAction): SftFileState {
  switch (action.type) {
    case 'readStarted':
      return { ...state, reading: true, readError: null };
    case 'read':
      return { ...state, reading: false, chosen: { file: action.file, inspection: action.inspection } };
    case 'readFailed':
      // The previous file is dropped too: the drop zone must not name a file other than the one just chosen.
      return { ...state, reading: false, chosen: null, readError: READ_ERROR };
    case 'submitRefused':
      return { ...state, showFileProblem: true };
  }
}

/** Why the file cannot be sent, in the words of the footer's line; undefined when it can. */
export function fileProblemOf(chosen: ChosenFile | null): string | undefined {
  if (!chosen) return 'Choose a dataset file';
  if (chosen.inspection.errorCount > 0) return 'Fix the invalid lines listed above';
  if (chosen.inspection.exampleCount === 0) return 'The file has no examples';
  return undefined;
}

/** The file has lines that failed the check (they are listed under the drop zone). */
export const hasInvalidLines = (state: SftFileState) => Boolean(state.chosen && state.chosen.inspection.errorCount > 0);

/**
 * The model the form trains: the one picked, else the linked one (`?model=`) when the person has it, else the first
 * one of the selected entity, else the first one; '' while there is none.
 */
export function effectiveModelId(
  picked: string | undefined,
  linked: string | null,
  entity: string,
  models: readonly ModelSummaryDto[],
): string {
  return (
    picked ||
    (linked && models.some((m) => m.id === linked) ? linked : '') ||
    models.find((m) => m.entity === entity)?.id ||
    models[0]?.id ||
    ''
  );
}

/** A `?model=` link names a model that the loaded list does not have. */
export const linkedModelMissing = (linked: string | null, loaded: boolean, models: readonly ModelSummaryDto[]) =>
  Boolean(linked && loaded && !models.some((m) => m.id === linked));

export type StartFrom = 'latest' | 'base' | number;

/** The select's value → the job's start: a step the chosen model does not have (another model picked, a stale link) falls back to the latest. */
export function resolveStartFrom(choice: string | undefined, checkpointSteps: readonly number[]): StartFrom {
  const value = choice ?? 'latest';
  if (value === 'base') return 'base';
  if (value !== 'latest' && checkpointSteps.includes(Number(value))) return Number(value);
  return 'latest';
}

type SettingsShape = typeof sftSettingsFormSchema.shape;

/** One setting as the form reads it: each its own parse, so that one bad field leaves the others' estimate. */
function setting<K extends keyof SettingsShape>(
  values: Partial<SftSettingsFormValues>,
  key: K,
): z.output<SettingsShape[K]> | null {
  const parsed = sftSettingsFormSchema.shape[key].safeParse(values[key] ?? '');
  return parsed.success ? (parsed.data as z.output<SettingsShape[K]>) : null;
}

export interface SftEstimateInputs {
  /** The share held out for validation (0: none). */
  holdOut: number;
  /** Why the hold-out cannot be, shown on its select; undefined when it can. */
  holdOutProblem: string | undefined;
  /** The steps exactly as the trainer batches; null while the file or a setting it needs is missing or invalid. */
  plan: { examples: number; heldOut: number; epochs: number; batch: number; steps: number } | null;
}

/** What the estimate line says, from the settings as typed and the file's check. */
export function estimateInputs(
  values: Partial<SftSettingsFormValues>,
  inspection: SftInspection | undefined,
): SftEstimateInputs {
  const batchSetting = setting(values, 'batch_size');
  const epochs = setting(values, 'epochs');
  const holdOut = setting(values, 'validation_split') ?? 0;
  const clean = inspection !== undefined && inspection.errorCount === 0;
  const allExamples = clean ? inspection.exampleCount : 0;
  const heldOut = validationCount(allExamples, holdOut);
  const examples = allExamples - heldOut;
  const batch = batchSetting == null ? null : batchSetting === 'auto' ? SFT_DEFAULT_BATCH_SIZE : batchSetting;
  return {
    holdOut,
    holdOutProblem:
      holdOut > 0 && clean && allExamples < 2 ? 'Holding examples out needs at least 2 examples' : undefined,
    plan:
      examples > 0 && batch !== null && epochs != null
        ? { examples, heldOut, epochs, batch, steps: sftStepCount(examples, batch, epochs) }
        : null,
  };
}

/** What the browser checks before a submit, beyond the settings' schema: a model, a good file, a possible hold-out. */
export const blocksSubmit = (state: SftFileState, hasModel: boolean, holdOutProblem: string | undefined) =>
  !hasModel || fileProblemOf(state.chosen) !== undefined || holdOutProblem !== undefined || state.reading;
