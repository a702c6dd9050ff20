import { Alert } from '@/components/ui/alert';
import { CheckIcon } from '@/components/ui/icons';
import { fileProblemOf, hasInvalidLines, type ChosenFile, type SftFileState } from '@/lib/client/sft/state';
import { DatasetDropZone } from './dataset-drop-zone';
import { DatasetErrors, DatasetPreview } from './dataset-preview';

const ERRORS_ID = 'dataset-errors';

/**
 * The SFT form's dataset: the drop zone, what the file must hold, and what the browser's check of it found (reading,
 * a read failure, the count, the invalid lines, the first examples). The state is the form's (lib/client/sft/state.ts).
 */
export function DatasetField({
  state,
  onFile,
  disabled,
}: {
  state: SftFileState;
  onFile: (file: File) => void;
  disabled: boolean;
}) {
  const { chosen, reading, readError, showFileProblem } = state;
  const inspection = chosen?.inspection;
  const invalidLines = hasInvalidLines(state);
  const fileProblem = fileProblemOf(chosen);
  return (
    <fieldset className="flex flex-col gap-3">
      <legend className="mb-1.5 text-sm font-medium text-fg">Dataset</legend>
      <DatasetDropZone
        fileName={chosen?.file.name ?? null}
        onFile={onFile}
        disabled={disabled}
        invalid={Boolean(showFileProblem && fileProblem) || invalidLines}
        describedBy={[
          'dataset-hint',
          invalidLines ? ERRORS_ID : null,
          showFileProblem && fileProblem ? 'dataset-problem' : null,
        ]
          .filter(Boolean)
          .join(' ')}
      />
      <p id="dataset-hint" className="text-xs leading-relaxed text-fg-subtle">
        JSONL: one <code className="font-mono">{'{"messages": [...]}'}</code> object per line; roles system, developer,
        user, assistant or tool; the last message of each line is the assistant’s.
      </p>
      {/* Invalid lines are listed below, under their own id: the line would only repeat them. */}
      {showFileProblem && fileProblem && !invalidLines ? (
        <p id="dataset-problem" className="text-xs font-medium text-danger-text">
          {fileProblem}
        </p>
      ) : null}
      {reading ? (
        <p role="status" className="text-sm text-fg-muted">
          Checking the file…
        </p>
      ) : null}
      {readError ? (
        <Alert tone="danger" role="alert">
          {readError}
        </Alert>
      ) : null}
      {chosen && inspection && !reading ? (
        <>
          <DatasetSummary chosen={chosen} />
          <DatasetErrors inspection={inspection} id={ERRORS_ID} />
          <DatasetPreview inspection={inspection} />
        </>
      ) : null}
    </fieldset>
  );
}

function DatasetSummary({ chosen: { file, inspection } }: { chosen: ChosenFile }) {
  return (
    <p role="status" data-testid="dataset-summary" className="flex items-center gap-1.5 text-sm text-fg-muted">
      {inspection.errorCount === 0 && inspection.exampleCount > 0 ? (
        <CheckIcon className="size-4 text-success-text" />
      ) : null}
      {inspection.exampleCount.toLocaleString('en')} valid example
      {inspection.exampleCount === 1 ? '' : 's'}
      {inspection.errorCount > 0
        ? `, ${inspection.errorCount.toLocaleString('en')} invalid line${inspection.errorCount === 1 ? '' : 's'}`
        : ''}
      {' · '}
      {formatBytes(file.size)}
    </p>
  );
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
