import { Badge } from '@/components/ui/badge';
import type { SftInspection } from '@/lib/client/sft/sft-dataset';

const ROLE_TONE = { system: 'info', developer: 'info', user: 'neutral', assistant: 'accent', tool: 'warning' } as const;

/**
 * The first examples of a dataset, rendered as plain text: a training file is untrusted input, and React
 * text nodes never interpret it as HTML.
 */
export function DatasetPreview({ inspection }: { inspection: SftInspection }) {
  if (inspection.preview.length === 0) return null;
  return (
    <div data-testid="dataset-preview" className="flex flex-col gap-3">
      <h3 className="text-sm font-medium text-fg">
        First {inspection.preview.length === 1 ? 'example' : `${inspection.preview.length} examples`}
      </h3>
      <ol className="flex flex-col gap-3">
        {inspection.preview.map((example) => (
          <li
            key={example.line}
            className="rounded-lg border border-line bg-surface-muted/40"
            data-testid="dataset-example"
          >
            <p className="border-b border-line px-3 py-1.5 font-mono text-xs text-fg-subtle">
              Line {example.line}
              {example.tools ? ` · ${example.tools.length} tool${example.tools.length === 1 ? '' : 's'}` : ''}
            </p>
            <ul className="divide-y divide-line">
              {example.messages.map((message, i) => (
                <li key={i} className="flex gap-3 px-3 py-2">
                  <span className="w-20 shrink-0">
                    <Badge tone={ROLE_TONE[message.role as keyof typeof ROLE_TONE] ?? 'neutral'}>{message.role}</Badge>
                  </span>
                  <p className="line-clamp-4 min-w-0 flex-1 text-sm break-words whitespace-pre-wrap text-fg">
                    {message.content === '' ? <span className="text-fg-subtle italic">(empty)</span> : message.content}
                  </p>
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ol>
    </div>
  );
}

/** Every bad line the browser found, each with its number, so the file can be fixed in one pass. */
export function DatasetErrors({ inspection, id }: { inspection: SftInspection; id?: string }) {
  if (inspection.errorCount === 0) return null;
  const hidden = inspection.errorCount - inspection.errors.length;
  return (
    <div
      id={id}
      role="alert"
      data-testid="dataset-errors"
      className="rounded-lg border border-danger-text/25 bg-danger-soft px-3.5 py-3 text-sm text-danger-text"
    >
      <p className="font-medium">
        {inspection.errorCount === 1
          ? '1 line needs fixing'
          : `${inspection.errorCount.toLocaleString('en')} lines need fixing`}{' '}
        before this file can be used
      </p>
      <ul className="mt-2 flex flex-col gap-1">
        {inspection.errors.map((error) => (
          <li key={error.line} className="flex gap-2" data-testid="dataset-error">
            <span className="shrink-0 font-mono text-xs leading-5 font-semibold">Line {error.line}</span>
            <span className="min-w-0 break-words opacity-90">{error.message}</span>
          </li>
        ))}
      </ul>
      {hidden > 0 ? <p className="mt-2 text-xs opacity-90">…and {hidden.toLocaleString('en')} more.</p> : null}
    </div>
  );
}
