'use client';

import { useId, useState, type DragEvent } from 'react';
import { cx } from '@/components/ui/cx';
import { UploadIcon } from '@/components/ui/icons';

interface DatasetDropZoneProps {
  /** The chosen file's name, shown in place of the prompt. */
  fileName: string | null;
  onFile: (file: File) => void;
  disabled?: boolean;
  describedBy?: string;
  invalid?: boolean;
}

/**
 * Drop a JSONL file, or pick one. The real control is the native file input (visually hidden, still
 * focusable): keyboard and screen-reader users get the browser's own file picker, and the label around
 * it is the big drop target that mouse users see.
 */
export function DatasetDropZone({
  fileName,
  onFile,
  disabled = false,
  describedBy,
  invalid = false,
}: DatasetDropZoneProps) {
  const id = useId();
  const [dragging, setDragging] = useState(false);

  function onDrop(event: DragEvent<HTMLLabelElement>) {
    event.preventDefault();
    setDragging(false);
    if (disabled) return;
    const file = event.dataTransfer.files[0];
    if (file) onFile(file);
  }

  return (
    <label
      htmlFor={id}
      data-testid="dataset-drop-zone"
      onDragOver={(event) => {
        // Without preventDefault the browser would open the dropped file instead of handing it to us.
        event.preventDefault();
        if (!disabled) setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
      className={cx(
        'flex cursor-pointer flex-col items-center justify-center gap-2 rounded-xl border-2 border-dashed px-6 py-8 text-center transition-colors',
        'has-[input:focus-visible]:outline-2 has-[input:focus-visible]:outline-offset-2 has-[input:focus-visible]:outline-ring',
        dragging
          ? 'border-accent bg-accent-soft'
          : invalid
            ? 'border-danger/60 bg-danger-soft/40'
            : 'border-line-strong bg-surface-muted/40 hover:bg-surface-muted',
        disabled && 'pointer-events-none opacity-60',
      )}
    >
      <input
        id={id}
        type="file"
        accept=".jsonl,.json,.txt,application/jsonl,application/x-ndjson,text/plain"
        className="sr-only"
        disabled={disabled}
        aria-describedby={describedBy}
        aria-invalid={invalid || undefined}
        data-testid="dataset-file-input"
        onChange={(event) => {
          const file = event.target.files?.[0];
          if (file) onFile(file);
          // Choosing the same file again after fixing it on disk must fire change again.
          event.target.value = '';
        }}
      />
      <span className="flex size-10 items-center justify-center rounded-lg bg-surface text-fg-muted ring-1 ring-line">
        <UploadIcon className="size-5" />
      </span>
      {fileName ? (
        <span className="text-sm">
          <span className="font-medium text-fg">{fileName}</span>
          <span className="block text-xs text-fg-subtle">Drop another file or click to replace it</span>
        </span>
      ) : (
        <span className="text-sm">
          <span className="font-medium text-accent-text">Choose a JSONL file</span>
          <span className="text-fg-muted"> or drag it here</span>
          <span className="block text-xs text-fg-subtle">
            One JSON object per line with a &quot;messages&quot; array
          </span>
        </span>
      )}
    </label>
  );
}
