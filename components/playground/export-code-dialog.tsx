'use client';

import { useId, useState } from 'react';
import { Button } from '@/components/ui/button';
import { CodeBlock } from '@/components/ui/code-block';
import { SegmentedControl } from '@/components/ui/segmented-control';
import { exportCode, type CodeLanguage } from '@/lib/client/chat/code-export';
import { useModalDialog } from '@/components/ui/use-modal-dialog';

const LANGUAGES = [
  { value: 'curl', label: 'curl' },
  { value: 'python', label: 'Python' },
  { value: 'typescript', label: 'TypeScript' },
] as const;

interface ExportCodeDialogProps {
  open: boolean;
  /** The request body to reproduce, exactly as the playground sent (or would send) it. */
  request: object | null;
  model: string;
  origin: string;
  /** True when `request` is the last one sent, false when it is built from the current draft. */
  sent: boolean;
  onClose: () => void;
}

/** A modal on the native <dialog> (focus trap, Escape, inert page), like ConfirmDialog. */
export function ExportCodeDialog({ open, request, model, origin, sent, onClose }: ExportCodeDialogProps) {
  const ref = useModalDialog(open);
  const id = useId();
  const [language, setLanguage] = useState<CodeLanguage>('curl');

  const code = request ? exportCode(language, request, { origin }) : '';

  return (
    <dialog
      ref={ref}
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-description`}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onClick={(event) => {
        if (event.target === event.currentTarget) onClose();
      }}
      data-testid="export-code-dialog"
      className="m-auto w-[calc(100%-2rem)] max-w-3xl rounded-xl border border-line bg-surface-raised p-0 text-fg shadow-2xl backdrop:bg-black/50 backdrop:backdrop-blur-[1px]"
    >
      <div className="flex flex-col gap-4 p-5">
        <div className="flex flex-wrap items-start justify-between gap-3">
          <div className="min-w-0">
            <h2 id={`${id}-title`} className="text-base font-semibold">
              Export code
            </h2>
            <p id={`${id}-description`} className="mt-1 text-sm text-fg-muted">
              {sent ? 'The last request sent to ' : 'The request that would be sent to '}
              <span className="font-mono text-fg">{model}</span>, with the same seed and parameters. Set{' '}
              <code className="font-mono text-fg">TUNEBOARD_API_KEY</code> to an API key first.
            </p>
          </div>
          <SegmentedControl
            label="Language"
            size="sm"
            value={language}
            options={LANGUAGES}
            onChange={setLanguage}
            data-testid="export-language"
          />
        </div>
        <CodeBlock
          label={LANGUAGES.find((l) => l.value === language)?.label}
          code={code}
          className="max-h-[60vh] overflow-y-auto"
          data-testid="export-code"
        />
      </div>
      <div className="flex justify-end gap-2 border-t border-line bg-surface-muted/60 px-5 py-3">
        <Button variant="secondary" onClick={onClose}>
          Close
        </Button>
      </div>
    </dialog>
  );
}
